// Runs pi-agent-core 0.79.10's compaction (dist/harness/compaction/) on the cases of
// tests/session/compaction_cases.py and prints what it computes, one result per case:
//
//   node run_compaction.mjs CASES.json
//
// tests/session/test_compaction_parity.py computes the same with py_agent.session.compaction and
// compares. Keep the two in step: the result's shape is built by `run` here and by `python_result` there.
// Summary requests go to a fake API ("compaction-test") that records them and answers with a text
// made from the request, an error or an abort (the case's `reply`).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createAssistantMessageEventStream, registerApiProvider } from "@earendil-works/pi-ai/base";

const harness = join(import.meta.dirname, "node_modules", "@earendil-works", "pi-agent-core", "dist", "harness");
const load = (path) => import(join(harness, path));
const compaction = await load("compaction/compaction.js");
const branch = await load("compaction/branch-summarization.js");
const { convertToLlm } = await load("messages.js");
const { buildSessionContext, Session } = await load("session/session.js");
const { InMemorySessionStorage } = await load("session/memory-storage.js");

let requests = [];
let reply = "stop";

// The fake provider's answer: deterministic from the request, so both sides give the same.
function answerText(prompt) {
  const kind = prompt.includes("This is the PREFIX of a turn")
    ? "prefix"
    : prompt.includes("<previous-summary>")
      ? "update"
      : prompt.includes("conversation branch")
        ? "branch"
        : "history";
  return `## Goal\nSummary (${kind}) of ${prompt.split("\n").length} lines.`;
}

registerApiProvider({
  api: "compaction-test",
  stream: fake,
  streamSimple: fake,
});

function fake(model, context, options) {
  const stream = createAssistantMessageEventStream();
  const prompt = context.messages[0].content[0].text;
  requests.push({
    systemPrompt: context.systemPrompt,
    messages: context.messages.map(({ timestamp, ...rest }) => rest),
    maxTokens: options?.maxTokens ?? null,
    apiKey: options?.apiKey ?? null,
    headers: options?.headers ?? null,
    reasoning: options?.reasoning ?? null,
  });
  const message = {
    role: "assistant",
    content: reply === "stop" ? [{ type: "text", text: answerText(prompt) }, { type: "text", text: "second block" }] : [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: reply,
    timestamp: 0,
  };
  queueMicrotask(() => {
    if (reply === "stop") {
      stream.push({ type: "done", reason: "stop", message });
    } else {
      message.errorMessage = reply === "error" ? "HTTP 500: summary server down" : "";
      stream.push({ type: "error", reason: reply, error: message });
    }
  });
  return stream;
}

function pathTo(byId, leafId) {
  const path = [];
  const seen = new Set();
  let current = leafId ? byId.get(leafId) : undefined;
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.unshift(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return path;
}

function fileOps(ops) {
  return { read: [...ops.read], written: [...ops.written], edited: [...ops.edited] };
}

function failure(error) {
  return { error: { code: error.code, message: error.message } };
}

async function run(testCase) {
  const byId = new Map(testCase.entries.map((entry) => [entry.id, entry]));
  const path = pathTo(byId, testCase.leafId);
  const settings = testCase.settings;
  const messages = buildSessionContext(path).messages;
  const estimate = compaction.estimateContextTokens(messages);
  const lastUsage = compaction.getLastAssistantUsage(path) ?? null;
  const out = {
    estimates: messages.map((m) => compaction.estimateTokens(m)),
    entryEstimates: path.filter((e) => e.type === "message").map((e) => compaction.estimateTokens(e.message)),
    contextEstimate: estimate,
    lastUsage,
    lastUsageTokens: lastUsage ? compaction.calculateContextTokens(lastUsage) : null,
    shouldCompact: testCase.windows.map((w) => compaction.shouldCompact(estimate.tokens, w, settings)),
    turnStarts: path.map((_, i) => compaction.findTurnStartIndex(path, i, 0)),
    cutPoints: testCase.keepRecent.map((k) => compaction.findCutPoint(path, 0, path.length, k)),
  };
  const prepared = compaction.prepareCompaction(path, settings);
  if (!prepared.ok) {
    out.preparation = failure(prepared.error);
  } else if (!prepared.value) {
    out.preparation = null;
  } else {
    const prep = prepared.value;
    out.preparation = { ...prep, fileOps: fileOps(prep.fileOps), previousSummary: prep.previousSummary ?? null };
    out.serialized = compaction.serializeConversation(convertToLlm(prep.messagesToSummarize));
    out.serializedPrefix = compaction.serializeConversation(convertToLlm(prep.turnPrefixMessages));
    requests = [];
    reply = testCase.reply;
    const result = await compaction.compact(
      prep,
      testCase.model,
      testCase.apiKey ?? undefined,
      testCase.headers ?? undefined,
      testCase.customInstructions ?? undefined,
      undefined,
      testCase.thinkingLevel ?? undefined,
    );
    out.requests = requests;
    out.result = result.ok ? result.value : failure(result.error);
    if (result.ok) {
      // The entry pi's session appends, and the context it then builds.
      const storage = new InMemorySessionStorage({ entries: testCase.entries });
      const session = new Session(storage);
      await storage.setLeafId(testCase.leafId);
      const { summary, firstKeptEntryId, tokensBefore, details } = result.value;
      const entryId = await session.appendCompaction(summary, firstKeptEntryId, tokensBefore, details, false);
      const { id, parentId, timestamp, ...entry } = await session.getEntry(entryId);
      out.entry = entry;
      out.contextAfter = (await session.buildContext()).messages;
    }
  }
  if (testCase.branchLeaf && testCase.branchTarget) {
    const session = {
      getBranch: async (id) => pathTo(byId, id),
      getEntry: async (id) => byId.get(id),
    };
    const { entries, commonAncestorId } = await branch.collectEntriesForBranchSummary(
      session,
      testCase.branchLeaf,
      testCase.branchTarget,
    );
    const prepared = branch.prepareBranchEntries(entries, 3000);
    requests = [];
    reply = testCase.reply;
    const replace = testCase.branchInstructions?.startsWith("REPLACE: ");
    const result = await branch.generateBranchSummary(entries, {
      model: testCase.model,
      apiKey: testCase.apiKey ?? undefined,
      headers: testCase.headers ?? undefined,
      customInstructions: replace ? testCase.branchInstructions.slice(9) : (testCase.branchInstructions ?? undefined),
      replaceInstructions: replace,
      reserveTokens: settings.reserveTokens,
    });
    out.branch = {
      entryIds: entries.map((e) => e.id),
      commonAncestorId,
      prepared: { ...prepared, fileOps: fileOps(prepared.fileOps) },
      requests,
      result: result.ok ? result.value : failure(result.error),
    };
  }
  return out;
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = {};
for (const testCase of cases) {
  try {
    results[testCase.name] = await run(testCase);
  } catch (error) {
    results[testCase.name] = { crashed: String(error?.stack ?? error) };
  }
}
process.stdout.write(JSON.stringify(results));
