// Drives Firefox for tests/engines/engine_drivers.py: puppeteer-core launches the given Firefox binary
// (WebDriver BiDi) and this script runs one command per line of stdin, answering each with one
// line of JSON on stdout: {"id", "ok": true, "value"} or {"id", "ok": false, "error"}.
//
//   node firefox_bridge.mjs /usr/bin/firefox-esr
//
// Commands: {"op": "version"}, {"op": "goto", "url"}, {"op": "reload"}, {"op": "eval", "body", "args"}
// (body of an async function of `args`; returns its JSON-able value), {"op": "click", "selector"},
// {"op": "type", "selector", "text"}, {"op": "press", "selector", "key"},
// {"op": "files", "selector", "paths"}, {"op": "close"}.
import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const binary = process.argv[2];
const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath: binary,
  headless: true,
  protocol: "webDriverBiDi",
  timeout: 180_000, // to start, on a busy machine
  extraPrefsFirefox: {
    // No first-run pages, updates or telemetry calls: the tests watch what the page requests.
    "browser.shell.checkDefaultBrowser": false,
    "app.update.enabled": false,
    "datareporting.policy.dataSubmissionEnabled": false,
  },
});
const page = (await browser.pages())[0] ?? (await browser.newPage());
await page.setViewport({ width: 1280, height: 860 });
// A busy machine (2 shared cores) can take long to load the page: wait for minutes, not seconds.
page.setDefaultNavigationTimeout(180_000);
page.setDefaultTimeout(60_000);

const ops = {
  version: async () => await browser.version(),
  goto: async ({ url }) => {
    await page.goto(url, { waitUntil: "load" });
  },
  reload: async () => {
    await page.reload({ waitUntil: "load" });
  },
  eval: async ({ body, args }) => {
    // A function built here and handed over as a function: the page's CSP forbids eval in the page.
    const fn = new Function("args", `return (async () => { ${body} })();`);
    return await page.evaluate(fn, args ?? []);
  },
  click: async ({ selector }) => {
    await page.click(selector);
  },
  type: async ({ selector, text }) => {
    await page.focus(selector);
    await page.keyboard.type(text);
  },
  press: async ({ selector, key }) => {
    if (selector) await page.focus(selector);
    await page.keyboard.press(key);
  },
  files: async ({ selector, paths }) => {
    const input = await page.$(selector);
    await input.uploadFile(...paths);
  },
  close: async () => {
    await browser.close();
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const command = JSON.parse(line);
  let answer;
  try {
    const value = await ops[command.op](command);
    answer = { id: command.id, ok: true, value: value ?? null };
  } catch (error) {
    answer = { id: command.id, ok: false, error: String(error?.stack ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
  if (command.op === "close") break;
}
process.exit(0);
