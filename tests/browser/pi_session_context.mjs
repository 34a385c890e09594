// Opens a session .jsonl with pi's own SessionManager (@earendil-works/pi-coding-agent 0.79.10,
// dist/core/session-manager.js, imported directly) and prints the messages pi's CLI would send:
// convertToLlm(buildSessionContext().messages). Used by test_composer_attachments.py.
//
//     node pi_session_context.mjs NODE_MODULES FILE.jsonl

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, file] = process.argv.slice(2);
const dist = join(modules, "@earendil-works", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(dist, "session-manager.js")).href);
const { convertToLlm } = await import(pathToFileURL(join(dist, "messages.js")).href);

const manager = SessionManager.open(file);
const context = manager.buildSessionContext();
process.stdout.write(JSON.stringify({ messages: convertToLlm(context.messages) }));
