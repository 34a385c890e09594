// The page's entry to the in-page tools: the sandboxes of the javascript and python tools, the
// workspace database, the preview panel, the tool renderers and grep's search worker. Python
// reaches them through globalThis.pyAgentSandbox (py_agent/browser/sandbox.py loads this module when
// the page has not).
import { python, runJavaScript } from "./host.js";
import * as workspaceDb from "./workspace-db.js";
import { WorkspacePreview } from "./preview.js";
import * as renderers from "./renderers.js";
import * as grep from "./grep.js";

const STYLE_ID = "py-agent-sandbox-css";
if (!document.getElementById(STYLE_ID)) {
  const link = document.createElement("link");
  link.id = STYLE_ID;
  link.rel = "stylesheet";
  link.href = new URL("./sandbox.css", import.meta.url).href;
  document.head.append(link);
}

export const api = Object.freeze({ runJavaScript, python, workspaceDb, WorkspacePreview, renderers, grep });
globalThis.pyAgentSandbox = api;
