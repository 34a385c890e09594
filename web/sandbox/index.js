// @ts-check
// The page's entry to the in-page tools: the sandboxes of the javascript and python tools, the
// workspace database, the Files panel (web/files/), the tool renderers and grep's search worker. Python
// reaches them through globalThis.pyAgentSandbox (py_agent/browser/sandbox.py loads this module when
// the page has not).
import { python, runJavaScript } from "./host.js";
import * as workspaceDb from "./workspace-db.js";
import * as folder from "./folder.js";
import { WorkspacePreview } from "../files/preview.js";
import * as renderers from "./renderers.js";
import * as grep from "./grep.js";

for (const [id, href] of [
  ["py-agent-sandbox-css", "./sandbox.css"],
  ["py-agent-files-css", "../files/files.css"],
]) {
  if (document.getElementById(id)) continue;
  const link = document.createElement("link");
  link.id = id;
  link.rel = "stylesheet";
  link.href = new URL(href, import.meta.url).href;
  document.head.append(link);
}

export const api = Object.freeze({ runJavaScript, python, workspaceDb, folder, WorkspacePreview, renderers, grep });
globalThis.pyAgentSandbox = api;
