// pi 1.6.0's own session code (@earendil-works/pi-coding-agent 1.6.0 from tests/reference-1x, its
// dist/core modules imported directly: the package's entry needs Node 22). Used by test_pi1x.py.
//
//     node pi1x_sessions.mjs write DIR [COUNT] [SEED]   writes session files with pi's SessionManager
//                                                       (the fixed scenarios, then COUNT random ones);
//                                                       prints {name: path}
//     node pi1x_sessions.mjs read MODULES FILE          opens FILE with the SessionManager in MODULES (a
//                                                       node_modules folder) and prints what pi sees
//
// `read` prints the leaf, the entries, the context at every entry (buildSessionContext), the leaf's
// LLM messages (convertToLlm) and, with pi 1.x, the session's usage totals (getUsageCostBreakdown).

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [command, ...args] = process.argv.slice(2);
const here = new URL(".", import.meta.url).pathname;

async function core(modules, name) {
  const dist = join(modules, "@earendil-works", "pi-coding-agent", "dist", "core");
  return import(pathToFileURL(join(dist, name)).href);
}

// ---- writing ----

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function usage(input, output, cost, cacheRead = 0) {
  return {
    input,
    output,
    cacheRead,
    cacheWrite: 0,
    totalTokens: input + output + cacheRead,
    cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
  };
}

let clock = 1_796_000_000_000;
const tick = () => (clock += 1000);
const user = (text) => ({ role: "user", content: text, timestamp: tick() });
const assistant = (text, u = usage(100, 20, 0.001), extra = []) => ({
  role: "assistant",
  content: [{ type: "text", text }, ...extra],
  api: "openai-completions",
  provider: "mock",
  model: "mock-1",
  usage: u,
  stopReason: extra.length ? "toolUse" : "stop",
  timestamp: tick(),
});
const toolResult = (id, text) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: tick(),
});
const TOOL = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } };
const systemFull = () => ({
  role: "system",
  content: "",
  sections: { preamble: "You are an expert coding assistant.", cwd: "/project" },
  toolsAdded: [TOOL],
  timestamp: tick(),
});
const systemPatch = () => ({
  role: "system",
  content: "",
  sections: { skills: "<skills>none</skills>", cwd: null },
  toolsRemoved: [{ name: "read" }],
  timestamp: tick(),
});

// The acceptance scenario: a system message, a usage entry, and a context_edit removing one user message.
function edits(manager) {
  manager.appendMessage(systemFull());
  const first = manager.appendMessage(user("Please forget this first question."));
  manager.appendMessage(assistant("First answer."));
  manager.appendUsage("cache_warm", "mock", "mock-1", usage(0, 0, 0.015, 50000));
  manager.appendMessage(user("The second question stays."));
  manager.appendMessage(assistant("Second answer."));
  manager.appendContextEdit(first, null);
  return { removed: first };
}

// Every pi 1.x addition: replacements of each editable role, a prompt change, a compaction with a
// system checkpoint, a usage entry, a branch summary with usage, labels and a name.
function everything(manager) {
  manager.appendModelChange("mock", "mock-1");
  manager.appendThinkingLevelChange("high");
  manager.appendMessage(systemFull());
  const u1 = manager.appendMessage(user("Read the file."));
  const call = { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } };
  const a1 = manager.appendMessage(assistant("Reading it.", usage(120, 30, 0.002), [call]));
  const r1 = manager.appendMessage(toolResult("call_1", "a long file ".repeat(20)));
  manager.appendMessage(assistant("It says hello."));
  manager.appendContextEdit(r1, { content: "a.txt: (elided)" });
  manager.appendContextEdit(a1, { content: [{ type: "text", text: "I read a.txt." }] });
  const c1 = manager.appendCustomMessageEntry("note", "A note for the model.", true, { why: "test" });
  manager.appendContextEdit(c1, { content: "A shorter note." });
  manager.appendLabelChange(u1, "start");
  manager.appendMessage(systemPatch());
  const u2 = manager.appendMessage(user("Now summarize."));
  manager.appendMessage(assistant("Summary: hello."));
  manager.appendUsage("cache_warm", "mock", "mock-1", usage(0, 0, 0.01, 1000), "warming");
  manager.appendCompaction("The user had a.txt read.", u2, 5000, { readFiles: ["a.txt"], modifiedFiles: [] }, false, usage(400, 50, 0.003));
  const u3 = manager.appendMessage(user("And then?"));
  manager.appendMessage(assistant("Then nothing."));
  manager.appendContextEdit(u2, { content: [{ type: "text", text: "Summarize (edited)." }] });
  manager.appendContextEdit(u2, { content: "Summarize (edited twice)." });
  manager.appendSessionInfo("pi 1.x session");
  manager.branchWithSummary(u3, "Tried another way.", { readFiles: [], modifiedFiles: [] }, false, usage(200, 10, 0.0005));
  manager.appendMessage(user("Back on the branch."));
  manager.appendMessage(assistant("Yes."));
  return {};
}

function random(manager, rand) {
  const pick = (items) => items[Math.floor(rand() * items.length)];
  const editable = () =>
    manager
      .getBranch()
      .filter(
        (e) =>
          e.type === "custom_message" ||
          (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)),
      );
  manager.appendMessage(systemFull());
  manager.appendMessage(user("start"));
  manager.appendMessage(assistant("ok"));
  const steps = 8 + Math.floor(rand() * 20);
  for (let i = 0; i < steps; i++) {
    const op = rand();
    if (op < 0.3) {
      manager.appendMessage(user(`question ${i} ${"x".repeat(Math.floor(rand() * 40))}`));
      if (rand() < 0.3) {
        const id = `call_${i}`;
        manager.appendMessage(assistant(`calling ${i}`, usage(50 + i, 5, 0.0001 * i), [{ type: "toolCall", id, name: "read", arguments: { i } }]));
        manager.appendMessage(toolResult(id, `result ${i}`));
      }
      manager.appendMessage(assistant(`answer ${i}`, usage(60 + i, 7, 0.0002 * i)));
    } else if (op < 0.45) {
      const target = pick(editable());
      if (!target) continue;
      const kind = rand();
      const replacement =
        kind < 0.4 ? null : kind < 0.7 ? { content: `edited ${i}` } : { content: [{ type: "text", text: `edited block ${i}` }] };
      manager.appendContextEdit(target.id, replacement);
    } else if (op < 0.52) {
      manager.appendUsage(pick(["cache_warm", "other"]), "mock", "mock-1", usage(0, 0, 0.001 * i, 100 * i));
    } else if (op < 0.58) {
      manager.appendMessage(rand() < 0.5 ? systemPatch() : systemFull());
    } else if (op < 0.65) {
      const kept = pick(manager.getBranch().filter((e) => e.type === "message" && e.message.role === "user"));
      if (!kept) continue;
      manager.appendCompaction(`summary ${i}`, rand() < 0.2 ? undefined : kept.id, 1000 * i, undefined, undefined, rand() < 0.5 ? usage(10, 2, 0.0003) : undefined);
    } else if (op < 0.72) {
      manager.appendCustomMessageEntry("note", `note ${i}`, rand() < 0.5);
    } else if (op < 0.8) {
      const target = pick(manager.getBranch());
      manager.branch(target.id);
    } else if (op < 0.85) {
      const target = pick(manager.getBranch());
      manager.branchWithSummary(target.id, `left branch ${i}`, undefined, undefined, usage(5, 1, 0.0001));
    } else if (op < 0.9) {
      manager.appendLabelChange(pick(manager.getBranch()).id, `label ${i}`);
    } else if (op < 0.95) {
      manager.appendThinkingLevelChange(pick(["off", "low", "high"]));
    } else {
      manager.appendMessage({ role: "custom", customType: "x", content: `custom ${i}`, display: true, timestamp: tick() });
    }
  }
  manager.appendMessage(user("end"));
  manager.appendMessage(assistant("done"));
  return {};
}

async function write(dir, count, seed) {
  const { SessionManager } = await core(join(here, "..", "reference-1x", "node_modules"), "session-manager.js");
  const files = {};
  const make = (name, build) => {
    const manager = SessionManager.create("/project", dir);
    const info = build(manager);
    files[name] = { path: manager.getSessionFile(), ...info };
  };
  make("edits", edits);
  make("everything", everything);
  const rand = mulberry32(seed);
  for (let i = 0; i < count; i++) make(`random-${i}`, (manager) => random(manager, rand));
  process.stdout.write(JSON.stringify(files));
}

// ---- reading ----

async function read(modules, file) {
  const { SessionManager } = await core(modules, "session-manager.js");
  const { convertToLlm } = await core(modules, "messages.js");
  const manager = SessionManager.open(file);
  const entries = manager.getEntries();
  const contexts = {};
  for (const entry of entries) contexts[entry.id] = context(manager, entry.id);
  const leaf = manager.buildSessionContext();
  let usageTotals = null;
  try {
    const { getUsageCostBreakdown } = await core(modules, "usage-totals.js");
    usageTotals = getUsageCostBreakdown(entries);
  } catch {
    // pi 0.79.10 has no usage-totals module
  }
  process.stdout.write(
    JSON.stringify({
      header: manager.getHeader(),
      leafId: manager.getLeafId(),
      entries,
      contexts,
      llm: convertToLlm(leaf.messages),
      usage: usageTotals,
    }),
  );
}

function context(manager, leafId) {
  const saved = manager.getLeafId();
  manager.branch(leafId);
  const { messages, thinkingLevel, model } = manager.buildSessionContext();
  if (saved === null) manager.resetLeaf();
  else manager.branch(saved);
  return { messages, thinkingLevel, model };
}

if (command === "write") await write(args[0], Number(args[1] ?? 0), Number(args[2] ?? 1));
else if (command === "read") await read(args[0], args[1]);
else throw new Error(`unknown command ${command}`);
