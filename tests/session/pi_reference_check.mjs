// Reads a session .jsonl with pi's own harness code (@earendil-works/pi-agent-core 0.79.10, from
// tests/reference/node_modules) and prints what pi sees: the leaf, the session name, the labels and
// the context (buildSessionContext) at every entry. Used by test_pi_reference.py.
//
//     node pi_reference_check.mjs FILE.jsonl
//
// JsonlSessionStorage is pi's strict reader: it refuses a file whose header is not version 3 or
// whose entries lack type, id, parentId or timestamp, so a file it opens is one pi can load.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const harness = join(here, "..", "reference", "node_modules", "@earendil-works", "pi-agent-core", "dist", "harness", "session");
const { JsonlSessionStorage } = await import(pathToFileURL(join(harness, "jsonl-storage.js")).href);
const { Session, buildSessionContext } = await import(pathToFileURL(join(harness, "session.js")).href);

const file = process.argv[2];
const fs = {
  readTextFile: async (path) => ({ ok: true, value: readFileSync(path, "utf8") }),
  readTextLines: async (path, options) => ({
    ok: true,
    value: readFileSync(path, "utf8").split("\n").slice(0, options?.maxLines ?? Infinity),
  }),
};
const storage = await JsonlSessionStorage.open(fs, file);
const session = new Session(storage);
const entries = await session.getEntries();
const contexts = {};
for (const entry of entries) {
  const { messages, thinkingLevel, model } = buildSessionContext(await storage.getPathToRoot(entry.id));
  contexts[entry.id] = { messages, thinkingLevel, model };
}
const labels = {};
for (const entry of entries) {
  const label = await session.getLabel(entry.id);
  if (label !== undefined) labels[entry.id] = label;
}
process.stdout.write(
  JSON.stringify({
    metadata: await session.getMetadata(),
    leafId: await session.getLeafId(),
    name: (await session.getSessionName()) ?? null,
    labels,
    entryIds: entries.map((e) => e.id),
    contexts,
  }),
);
