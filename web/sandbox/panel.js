// @ts-check
// The in-page tools' part of the chat page (imported from web/plugins.js): the "workspace" side
// panel and the cards of the tool calls, through the page's extension points (ui/extensions.js).
//
// Python (py_agent/app/workspace_tools.py) posts {sessionId, select?} to the panel when a session
// opens and when a tool writes a file worth showing; the panel then shows that session's files
// (WorkspacePreview, reading them from the agent's interpreter). A file chip in a tool card asks
// Python to open the panel on that file.
import { registerPanel, registerToolRenderer } from "../ui/extensions.js";
import { WorkspacePreview } from "../files/preview.js";
import { panelControls, showSession } from "../files/folder-bar.js";
import { TOOL_NAMES, renderToolParts } from "./renderers.js";
import "./index.js";

export const PANEL_ID = "workspace";

/** @type {HTMLElement | null} */
let container = null;
/** @type {((message: unknown) => void) | null} */
let send = null;
/** @type {WorkspacePreview | null} */
let preview = null;
/** @type {string | null} */
let shownSession = null;
/** @type {Promise<void> | null} */
let loading = null;

/**
 * @param {string} sessionId
 * @param {string | null} select the file to select once shown, if any
 */
async function show(sessionId, select) {
  if (sessionId !== shownSession || !preview) {
    shownSession = sessionId;
    preview?.destroy();
    preview = null;
    loading = (async () => {
      const { pyodide } = await window.pyAgent.ready;
      const source = await pyodide.pyimport("py_agent.browser.workspace").preview_source(sessionId);
      if (shownSession !== sessionId || !container) return;
      preview = new WorkspacePreview(container, source, { title: "Files", zipName: "workspace.zip" });
      const shown = preview;
      shown.root
        .querySelector(".pa-preview-header")
        .after(
          panelControls({ uploadFolder: () => shown.folderInput.click(), downloadZip: () => shown.downloadAll() }),
        );
    })();
  }
  await loading;
  if (select && preview && shownSession === sessionId) preview.select(select);
}

registerPanel(PANEL_ID, {
  title: "Workspace",
  mount(element, api) {
    container = element;
    send = api.send;
  },
  onMessage(data) {
    if (data && typeof data.sessionId === "string") {
      showSession(data.sessionId).catch((error) => console.warn("py-agent: the session's folder", error));
      show(data.sessionId, typeof data.select === "string" ? data.select : null).catch((error) =>
        console.warn("py-agent: the workspace panel could not load", error),
      );
    }
  },
});

// read, ls, grep and find keep the chat's own body (arguments and result text); the others get
// highlighted code, live output, a diff and file chips.
const GENERIC_BODY = new Set(["read", "ls", "grep", "find"]);
for (const name of TOOL_NAMES) {
  registerToolRenderer(name, (call) => {
    const parts = renderToolParts(call);
    if (parts && GENERIC_BODY.has(name)) delete parts.body;
    return parts;
  });
}

document.addEventListener("py-agent:open-file", (event) => {
  const path = /** @type {CustomEvent} */ (event).detail?.path;
  if ((typeof path === "string" || path === null) && send) send({ type: "open", path }); // null: the panel as it is
});
