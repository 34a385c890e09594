// @ts-check
// Settings → MCP servers: add a streamable HTTP server by name and URL (a bearer token is kept like an
// API key: on this device or for this tab, never exported), test it, see its tools, switch a server or
// one tool on or off, remove it; paste an `mcpServers` JSON (Claude Desktop, Cursor, pi). The Python
// side is py_agent/app/mcp_servers.py; the tools reach every session as mcp__<server>__<tool>.
// MCP tool cards show the server's name.

import { h } from "./dom.js";
import { confirmDialog } from "./dialogs.js";
import { registerSettingsTab, registerToolRenderer } from "./extensions.js";
import { afterStart, py } from "./bridge.js";

function field(id, label, input, hint) {
  input.id = id;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id, text: label }),
    input,
    hint ? h("p", { class: "muted small", text: hint }) : null,
  );
}

function parseHeaders(text) {
  const headers = {};
  for (const line of text.split("\n")) {
    const at = line.indexOf(":");
    if (line.trim() === "") continue;
    if (at <= 0) throw new Error(`A header line needs "Name: value": ${line}`);
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return headers;
}

function problemBox(problem) {
  if (!problem) return null;
  return h(
    "div",
    { class: "discovery bad mcp-problem", role: "alert", dataset: { kind: problem.kind ?? "error" } },
    h("div", { text: problem.summary ?? problem.error }),
    problem.fix ? h("pre", { class: "mono small mcp-fix", text: problem.fix }) : null,
  );
}

function serverCard(server, rerender, say) {
  const run = async (command, args) => {
    try {
      const result = await py(command, args);
      if (result.ok === false) say(`${server.name}: not connected.`);
      else if (command === "mcp_test")
        say(
          `${server.name}: connected, ${result.servers.find((s) => s.name === server.name)?.tools.length ?? 0} tools.`,
        );
      rerender();
    } catch (error) {
      say(error.message);
    }
  };
  const use = h("input", { type: "checkbox", class: "mcp-server-switch" });
  use.checked = server.enabled;
  use.addEventListener("change", () => run("mcp_switch", { name: server.name, enabled: use.checked }));
  const test = h("button", {
    type: "button",
    class: "btn small",
    text: "Test connection",
    "aria-label": `Test connection to ${server.name}`,
  });
  test.addEventListener("click", () => {
    say(`Connecting to ${server.name}…`);
    run("mcp_test", { name: server.name });
  });
  const remove = h("button", {
    type: "button",
    class: "btn small ghost danger",
    text: "Remove",
    "aria-label": `Remove ${server.name}`,
  });
  remove.addEventListener("click", async () => {
    const sure = await confirmDialog(`The MCP server ${server.name} and its token are removed from this browser.`, {
      title: "Remove MCP server",
      confirmLabel: "Remove",
      danger: true,
    });
    if (sure) run("mcp_remove", { name: server.name });
  });
  const signIn = h("button", {
    type: "button",
    class: "btn small primary",
    text: "Sign in",
    "aria-label": `Sign in to ${server.name}`,
    hidden: server.problem?.kind !== "auth",
  });
  signIn.addEventListener("click", async () => {
    // Opened at once (a popup must come from the click); the authorization URL follows.
    const popup = window.open("about:blank", SIGN_IN_WINDOW, "popup,width=520,height=680");
    try {
      const started = await py("mcp_sign_in", { name: server.name, redirect_uri: location.origin + location.pathname });
      if (!started.ok) throw new Error(started.problem.error);
      say(`Signing in to ${server.name} in the popup…`);
      if (popup) popup.location.href = started.url;
      else say("The browser blocked the sign-in window: allow popups for this page.");
    } catch (error) {
      popup?.close();
      say(error.message);
    }
  });
  const tools = server.tools.map((tool) => {
    const box = h("input", { type: "checkbox", class: "mcp-tool-switch", dataset: { tool: tool.name } });
    box.checked = tool.enabled;
    box.disabled = !server.enabled;
    box.addEventListener("change", () =>
      run("mcp_switch", { name: server.name, tool: tool.name, enabled: box.checked }),
    );
    return h(
      "li",
      { class: "mcp-tool", dataset: { tool: tool.name } },
      h("label", {}, box, " ", h("span", { class: "mono", text: tool.name })),
      tool.description ? h("div", { class: "small muted", text: tool.description }) : null,
    );
  });
  const where = server.token === "device" ? "on this device" : server.token === "tab" ? "for this tab" : "";
  const token = where ? `${server.signedIn ? "signed in" : "token"} ${where}` : "";
  const facts = [server.url, token, server.headers.length ? `headers: ${server.headers.join(", ")}` : ""]
    .filter(Boolean)
    .join(" · ");
  return h(
    "li",
    { class: "provider-card mcp-server", dataset: { name: server.name, connected: String(server.connected) } },
    h("div", {}, h("label", {}, use, " ", h("strong", { class: "mono", text: server.name }), " (use this server)")),
    h("div", { class: "small muted", text: facts }),
    problemBox(server.problem),
    tools.length ? h("ul", { class: "tool-list mcp-tools", "aria-label": `Tools of ${server.name}` }, tools) : null,
    h("div", { class: "row-actions" }, signIn, test, remove),
  );
}

// The status line's text outlives a re-render of the tab (the list is drawn again after each change).
let noteText = "";

async function renderMcp(panel, { rerender }) {
  rerenderTab = () => panel.isConnected && rerender();
  const { servers } = await py("mcp_servers");
  const note = h("div", { class: "muted small", role: "status", id: "mcp-status", text: noteText });
  const say = (text) => {
    noteText = text;
    note.textContent = text;
  };
  const name = h("input", { class: "input", type: "text", placeholder: "docs", autocomplete: "off" });
  const url = h("input", { class: "input", type: "url", placeholder: "https://example.com/mcp", autocomplete: "off" });
  const token = h("input", { class: "input", type: "password", autocomplete: "off" });
  const remember = h("input", { type: "checkbox", id: "mcp-remember" });
  remember.checked = true;
  const headers = h("textarea", { class: "input mono", rows: "2", spellcheck: "false" });
  const problem = h("div", { id: "mcp-add-problem" });
  const add = h("button", { type: "button", class: "btn primary", id: "mcp-add", text: "Add server" });
  add.addEventListener("click", async () => {
    add.disabled = true;
    problem.replaceChildren();
    say("Connecting…");
    try {
      const result = await py("mcp_add", {
        name: name.value,
        url: url.value,
        token: token.value,
        remember: remember.checked,
        headers: parseHeaders(headers.value),
      });
      token.value = "";
      say(result.ok ? `${name.value}: connected.` : `${name.value}: added, not connected.`);
      rerender();
    } catch (error) {
      say("");
      problem.replaceChildren(problemBox({ error: error.message }));
    } finally {
      add.disabled = false;
    }
  });
  const json = h("textarea", { class: "input mono", rows: "4", spellcheck: "false" });
  const imported = h("ul", { class: "tool-list small", id: "mcp-import-result" });
  const importButton = h("button", { type: "button", class: "btn", id: "mcp-import", text: "Add from JSON" });
  importButton.addEventListener("click", async () => {
    importButton.disabled = true;
    try {
      const result = await py("mcp_import", { text: json.value, remember: remember.checked });
      const rows = [
        ...result.added.map((a) => h("li", { text: `${a.name}: added${a.ok ? "" : " (not connected)"}` })),
        ...result.skipped.map((s) => h("li", { class: "mcp-skipped", text: `${s.name}: left out, ${s.reason}` })),
      ];
      rerender();
      say(`${result.added.length} added, ${result.skipped.length} left out.`);
      imported.replaceChildren(...rows);
    } catch (error) {
      imported.replaceChildren(h("li", { class: "discovery bad", role: "alert", text: error.message }));
    } finally {
      importButton.disabled = false;
    }
  });
  panel.replaceChildren(
    h("p", {
      class: "muted small",
      text: "Tools of Model Context Protocol servers that speak streamable HTTP and allow this page's origin (CORS). Programs started on your computer (stdio servers) cannot be reached from a browser.",
    }),
    h(
      "ul",
      { class: "provider-list", id: "mcp-servers", "aria-label": "MCP servers" },
      servers.map((s) => serverCard(s, rerender, say)),
    ),
    note,
    h("h3", { text: "Add a server" }),
    field("mcp-name", "Name", name, "Letters, digits, _ and -; its tools are named mcp__<name>__<tool>."),
    field("mcp-url", "URL", url),
    field(
      "mcp-token",
      "Bearer token (optional)",
      token,
      "Kept like an API key: never exported, sent only to this server.",
    ),
    h(
      "div",
      { class: "field inline" },
      remember,
      h("label", { for: "mcp-remember", text: "Remember on this device (otherwise for this tab)" }),
    ),
    field("mcp-headers", 'Other headers (optional, one "Name: value" a line)', headers),
    problem,
    h("div", { class: "row-actions" }, add),
    h("h3", { text: "Paste an mcpServers JSON" }),
    field("mcp-json", "mcpServers JSON (Claude Desktop, Cursor, pi)", json),
    h("div", { class: "row-actions" }, importButton),
    imported,
  );
}

registerSettingsTab("mcp", "MCP servers", renderMcp);

// The sign-in popup comes back to this page, whose first script (web/boot/early-start.js) hands the
// answer here and closes the popup.
const SIGN_IN_WINDOW = "py-agent-mcp-signin";
let rerenderTab = null;
window.addEventListener("message", async (event) => {
  if (event.origin !== location.origin || event.data?.type !== "py-agent-mcp-oauth") return;
  if (event.data.error) {
    noteText = `Sign-in refused: ${event.data.error_description ?? event.data.error}`;
  } else {
    try {
      const done = await py("mcp_sign_in_finish", { code: event.data.code, state: event.data.state });
      noteText = done.ok ? "Signed in." : done.problem.error;
    } catch (error) {
      noteText = error.message;
    }
  }
  const status = document.getElementById("mcp-status");
  if (status) status.textContent = noteText;
  rerenderTab?.();
});

// MCP tool cards: the server's name and the tool's (mcp__<server>__<tool>; the result says which server).
registerToolRenderer("mcp__*", (call) => {
  const details = (call.result ?? call.partial)?.details;
  const rest = call.name.slice("mcp__".length);
  const at = rest.indexOf("__");
  const server = details?.server ?? (at > 0 ? rest.slice(0, at) : rest);
  const tool = details?.tool ?? (at > 0 ? rest.slice(at + 2) : "");
  return { title: `${server} · ${tool}` };
});

// Python's side learns of the app once it is ready (not at the tab's first opening): a server's
// announced tool changes then reach the open session at once.
afterStart.then(() => py("mcp_servers")).catch(() => {});
