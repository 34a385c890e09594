// @ts-check
// "Open a folder…": a session's workspace as a folder on the user's disk (docs/folders.md).
//
// The controls live in three places, drawn from one state: the Files panel's header, the welcome
// screen, and a bar above the composer that names the folder while it is the workspace (or offers
// "Allow access to <folder> again" after a reload). web/sandbox/panel.js calls showSession() when
// a session's tools are built. Python's side is py_agent/browser/folder.py; the handle is kept
// per session by web/sandbox/folder.js. Where the browser has no showDirectoryPicker (Firefox,
// WebKit), the control says so and offers the upload of a folder and the zip download instead.
import * as folder from "../sandbox/folder.js";
import { h } from "../ui/dom.js";

const UNSUPPORTED =
  "This browser cannot open a folder on your disk (it lacks the File System Access API, which Chrome and Edge have). " +
  "Upload a folder instead, and download the files as a zip when you are done.";

/**
 * @typedef {object} FolderInfo Python's answer when a folder opens (py_agent/browser/folder.py)
 * @property {string} [name]
 * @property {string} [error]
 * @property {string[]} [skipped] the folders not read
 * @property {number} [capped] how many files were over the workspace's limits
 */
/**
 * @typedef {object} FolderState
 * @property {string | null} session
 * @property {"none" | "open" | "prompt" | "gone" | "error"} state
 * @property {string} name
 * @property {FileSystemDirectoryHandle | null} handle
 * @property {FolderInfo | null} info
 * @property {string} message
 * @property {boolean} explain
 */

// session: the chat shown; state: none | open | prompt | gone | error; info: Python's answer.
/** @type {FolderState} */
const current = { session: null, state: "none", name: "", handle: null, info: null, message: "", explain: false };
/** @type {{ uploadFolder: (() => void) | null, downloadZip: (() => void) | null }} */
const hooks = { uploadFolder: null, downloadZip: null };
let uploadWhenShown = false; // "Upload a folder" on the welcome screen, before the Files panel was drawn
/** @type {Set<HTMLElement>} */
const slots = new Set(); // the Files panels' places (one per panel drawn)

/**
 * @param {string} name a function of py_agent.browser.folder
 * @param {...unknown} args
 * @returns {Promise<any>}
 */
async function python(name, ...args) {
  const { pyodide } = await window.pyAgent.ready;
  return pyodide.pyimport("py_agent.browser.folder")[name](...args);
}

/** @param {Partial<FolderState>} changes */
function set(changes) {
  Object.assign(current, changes);
  render();
}

/**
 * @param {string} session
 * @param {FileSystemDirectoryHandle} handle
 */
async function attach(session, handle) {
  /** @type {FolderInfo} */
  const info = JSON.parse(await python("open_folder", session, handle));
  if (current.session !== session) return;
  if (info.error) set({ state: "error", message: info.error, handle: null });
  else set({ state: "open", name: info.name, handle, info, message: "" });
}

/**
 * The chat shown changed (or its tools were rebuilt): find its folder, if it has one.
 * @param {string} session
 */
export async function showSession(session) {
  if (session === current.session) return;
  set({ session, state: "none", handle: null, info: null, message: "", explain: false });
  if (!folder.supported()) return;
  const saved = await folder.recall(session).catch(() => undefined);
  if (!saved || current.session !== session) return;
  const { handle, name } = saved;
  // After a reload Chromium answers "prompt": nothing of the folder (not even whether it is still
  // there) can be read before the user allows it again.
  if ((await folder.permission(handle).catch(() => "prompt")) === "granted") await resume(session, handle, name);
  else set({ state: "prompt", name, handle });
}

/**
 * Access granted: the folder becomes the workspace again, or is said to be gone.
 * @param {string} session
 * @param {FileSystemDirectoryHandle} handle
 * @param {string} name
 */
async function resume(session, handle, name) {
  if (await folder.reachable(handle)) {
    await attach(session, handle);
    return;
  }
  await folder.forget(session).catch(() => {});
  set({
    state: "gone",
    name,
    handle: null,
    message: `The folder ${name} is gone or was renamed: this chat continues on its stored copy of the files.`,
  });
}

async function openFolder() {
  if (!folder.supported()) {
    set({ explain: true });
    return;
  }
  const session = current.session;
  if (!session) return;
  let handle;
  try {
    handle = await folder.pick();
  } catch (error) {
    if (error?.name !== "AbortError") set({ state: "error", message: `The folder was not opened: ${error.message}` });
    return;
  }
  await folder.remember(session, handle);
  await attach(session, handle);
}

async function allowAgain() {
  const { session, handle } = current;
  // requestPermission needs this click's user activation: it is the first thing awaited.
  const answer = await folder.allow(handle);
  if (answer === "granted") await resume(session, handle, current.name);
  else set({ message: `Access to ${current.name} was not allowed: the tools work on this chat's stored copy.` });
}

async function closeFolder() {
  const session = current.session;
  await folder.forget(session).catch(() => {});
  await python("close_folder", session);
  set({ state: "none", handle: null, info: null, message: "" });
}

/** Takes in what changed in the folder while the page was in the background. */
async function refresh() {
  if (current.state === "open") await python("refresh_folder", current.session);
}

function uploadFolder() {
  // The Files panel opens (web/sandbox/panel.js) to show what is uploaded; its picker opens now,
  // in this click, or once the panel is first drawn (panelControls()).
  document.dispatchEvent(new CustomEvent("py-agent:open-file", { detail: { path: null } }));
  if (hooks.uploadFolder) hooks.uploadFolder();
  else uploadWhenShown = true;
}

/**
 * @param {string} text
 * @param {() => unknown} onclick
 * @param {Record<string, unknown>} [extra] more of h()'s props
 */
function button(text, onclick, extra = {}) {
  return h("button", { type: "button", class: "pa-button", text, onclick: () => onclick(), ...extra });
}

/** @param {FolderInfo | null} info */
function skippedNote(info) {
  /** @type {string[]} */
  const parts = [];
  if (info?.skipped?.length) parts.push(`not read: ${info.skipped.map((p) => `${p}/`).join(", ")}`);
  if (info?.capped) parts.push(`${info.capped} file${info.capped === 1 ? "" : "s"} over the workspace's limits`);
  return parts.length ? ` (${parts.join("; ")})` : "";
}

/**
 * What one place shows; `where` is "panel", "welcome" or "bar".
 * @param {"panel" | "welcome" | "bar"} where
 * @returns {(HTMLElement | null)[]}
 */
function controls(where) {
  const { state, name } = current;
  if (state === "open") {
    return [
      h("span", { class: "pa-open-folder", text: `Folder: ${name}` }),
      where === "bar"
        ? h("span", {
            class: "muted small",
            text: ` — the agent reads and writes these files${skippedNote(current.info)}`,
          })
        : null,
      button("Close folder", closeFolder, { "aria-label": `Close folder ${name}` }),
    ];
  }
  if (state === "prompt") {
    return [
      h("span", { text: `This chat works in the folder ${name}. ` }),
      button(`Allow access to ${name} again`, allowAgain),
      button("Close folder", closeFolder, { "aria-label": `Close folder ${name}` }),
    ];
  }
  /** @type {HTMLElement[]} */
  const items = [];
  if (current.message) items.push(h("p", { class: "pa-folder-message", role: "status", text: current.message }));
  if (where === "bar") return items;
  items.push(button("Open a folder…", openFolder));
  if (current.explain) {
    items.push(
      h("p", { class: "pa-folder-explain", text: UNSUPPORTED }),
      button("Upload a folder", uploadFolder),
      button("Download all (.zip)", () => hooks.downloadZip?.()),
    );
  }
  return items;
}

function render() {
  for (const element of slots) {
    if (element.isConnected) element.replaceChildren(...controls("panel").filter(Boolean));
    else slots.delete(element);
  }
  const bar = document.getElementById("folder-bar");
  if (bar) {
    bar.replaceChildren(...controls("bar").filter(Boolean));
    bar.hidden = !bar.childElementCount;
  }
  const welcome = document.getElementById("welcome-folder");
  if (welcome) welcome.replaceChildren(...controls("welcome").filter(Boolean));
}

/**
 * A place in the Files panel; `uploadFolder`/`downloadZip` are the panel's own routes.
 * @param {{ uploadFolder: () => void, downloadZip: () => void }} routes
 */
export function panelControls({ uploadFolder, downloadZip }) {
  Object.assign(hooks, { uploadFolder, downloadZip });
  const element = h("div", { class: "pa-folder", role: "group", "aria-label": "Folder" });
  element.replaceChildren(...controls("panel").filter(Boolean));
  slots.add(element);
  if (uploadWhenShown) {
    uploadWhenShown = false;
    hooks.uploadFolder();
  }
  return element;
}

function mountBar() {
  if (document.getElementById("folder-bar")) return;
  const box = document.querySelector("#composer .composer-box");
  if (!box) return;
  box.before(h("div", { id: "folder-bar", class: "folder-bar", role: "region", "aria-label": "Folder", hidden: true }));
}

mountBar();
window.addEventListener("focus", () => refresh().catch(() => {}));
