// @ts-check
// The chat app's page: waits for boot.js (Pyodide + py_agent), opens IndexedDB, starts the Python
// side (py_agent/browser/main.py) and wires the DOM to it. Policy lives in Python; this file only does
// what the browser forces: DOM, events, animation frames, the URL, downloads, locks.

import { early } from "./boot/early.js";
import { ready, firstScreenDrawn } from "./boot/boot.js";
import { afterStart, appStarted, connect, py, on, receive } from "./ui/bridge.js";
import { $, h, icon, formatTokens, formatCost, announce, friendlyError, nameNode, nameText } from "./ui/dom.js";
import { ChatView } from "./ui/chat.js";
import { loadMarkdown } from "./ui/markdown-deferred.js";
import { Composer } from "./ui/composer.js";
import { SessionList } from "./ui/sessions.js";
import { pickModel } from "./ui/model-picker.js";
import { askForKey } from "./ui/key-dialog.js";
import { openSettings } from "./ui/settings.js";
import { choiceDialog, confirmDialog, promptDialog } from "./ui/dialogs.js";
import { toast, dismiss } from "./ui/toasts.js";
import { lockSession, releaseSession } from "./ui/locks.js";
import { requestPersistence } from "./ui/storage-status.js";
import { panel as getPanel } from "./ui/extensions.js";
import { useSettings } from "./attachments/limits.js";
import "./plugins.js";
import "./ui/reliability.js"; // retry notices, keys and sessions kept in step across tabs

// The layout's phone breakpoint (web/chat.css): panels and the sessions list cover the chat there.
const PHONE = matchMedia("(max-width: 760px)");

const app = {
  init: null,
  versions: null,
  state: null, // the open session's state (session_state)
  currentId: null,
  applyTheme,
  py, // the command channel (tests, console); no command returns a key
  frameTimings: null,
  db: null, // web/boot/idb.js's Storage: the page reads from it itself only to draw before Python can
  pythonReady: false,
  routable: false, // the address is followed (route) from main()'s first route on; before, only previewed
};
window.pyAgentApp = app;

// ---------------------------------------------------------------------------------------------
// Start

async function main() {
  // Storage was opened by web/boot/early.js, as the page started: Python's start does not wait for it.
  const opening = early.opening;
  const versionChanged = () =>
    toast("The app was updated in another tab: reload this page to continue.", "warn", { id: "version" });
  early.onVersionChange = versionChanged;
  if (early.versionChanged) versionChanged();
  const drawn = drawEarly(opening);
  ready.catch(() => {
    // Boot failed: its error is on the boot screen.
    $("#boot-screen").hidden = false;
    $("#app").hidden = true;
  });
  const boot = await ready;
  app.versions = boot.versions;
  let db;
  try {
    db = await opening;
  } catch (error) {
    if (error.name === "VersionError")
      fail(error.message.replace(/^VersionError: /, "The app cannot open its storage: "));
    else
      fail(
        `Storage is not available (${error.message}). Sessions cannot be saved in this window (is it a private window?).`,
      );
    return;
  }
  app.db = db;
  const params = new URLSearchParams(location.search);
  const options = {};
  if (params.has("demo-tps")) options.demoTokensPerSecond = Number(params.get("demo-tps"));
  const entry = boot.pyodide.pyimport("py_agent.browser.main");
  const dispatch = await entry.start(receive, db, tabKeyStore(), JSON.stringify(options));
  entry.destroy?.();
  connect(dispatch);
  app.init = await py("init", { origin: location.origin }); // advice names this page's origin
  useSettings(() => app.init?.settings); // the attachments' limits, as Settings has them
  applyTheme(app.init.settings.theme ?? "system");
  await drawn;
  if (!ui.chat) buildUi();
  wirePython();
  for (const notice of app.init.notices) toast(notice, "warn");
  // From here on every change of the address is routed (a click on a session while this first
  // route runs supersedes it); before, it was only previewed, and this route reads the address now.
  app.routable = true;
  await navigate();
  reveal();
  app.pythonReady = true;
  document.documentElement.dataset.app = "ready";
  appStarted();
  loadMarkdown(); // the transcript's text was drawn plain until now (web/ui/markdown-deferred.js)
  focusComposer();
  await sendEarlyMessages();
}

function reveal() {
  $("#boot-screen").hidden = true;
  $("#app").hidden = false;
}

// The message box, unless the user has put the focus elsewhere meanwhile (the page takes typing
// from its first moment: web/boot/early.js).
function focusComposer() {
  const active = document.activeElement;
  if (!active || active === document.body || active === $("#input")) ui.composer.focus();
}

// ---- before Python: the page draws from IndexedDB itself ----
//
// Python takes a while to start (seconds on a first visit). Meanwhile the page shows what it can
// read itself: the sessions list (the records' metadata, web/boot/idb.js) and the open session's last
// messages (recentMessages), and the message box takes typing; a message sent meanwhile is shown
// as queued and sent once Python is ready. The other controls wait for Python (web/ui/bridge.js).
// web/boot/early.js draws that first, before this module and its imports are loaded; here the app's
// own views take it over, and its full rendering replaces the early one.

const earlyQueue = early.queue; // texts sent before Python was ready, in order (web/boot/early.js's too)

async function drawEarly(opening) {
  try {
    await drawFirstScreen(opening);
  } finally {
    firstScreenDrawn(); // Python's start waits for it (web/boot/boot.js)
  }
}

async function drawFirstScreen(opening) {
  await early.drawn;
  if (document.documentElement.dataset.state === "error") return;
  // The page and the message box (drawn already by web/boot/early.js, unless it could not); then what
  // IndexedDB has.
  buildUi();
  reveal();
  focusComposer();
  if (earlyQueue.length) renderEarlyQueue();
  let db;
  try {
    db = await opening;
  } catch {
    return; // main() reports it once Python is ready
  }
  app.db = db;
  if (!early.metas) {
    try {
      const metas = JSON.parse(await db.listSessions()).filter((m) => m && typeof m.id === "string" && !m.corrupt);
      ui.sessions.sessions = metas; // the records' metadata: what Python's list_sessions returns
      ui.sessions.render();
    } catch {
      // Python lists them once it is ready, and says what is wrong.
    }
  }
  if (app.pythonReady) return;
  // The full rendering of what web/boot/early.js showed (the same messages), or the preview itself.
  const id = hashSessionId();
  if (early.preview && early.preview.id === id) ui.chat.showPreview(id, early.preview.items);
  else await previewFromHash({ paint: false });
  if (app.pythonReady) return;
  if (document.documentElement.dataset.early !== "drawn") {
    document.documentElement.dataset.early = "drawn"; // web/boot/early.js could not draw it
    performance.mark("py-agent:early-drawn");
  }
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))); // painted
}

function hashSessionId() {
  const match = /^#\/s\/(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

async function previewFromHash({ paint = true } = {}) {
  const id = hashSessionId();
  if (id) await previewSession(id, { paint });
  else if (ui.chat.previewing) {
    // Back to a new chat before Python is ready: nothing of the session left the screen showed.
    ui.chat.showPreview(null, []);
    setHeading("New chat", false);
    ui.sessions.setCurrent(null);
  }
}

function queueEarly(text) {
  earlyQueue.push(text);
  renderEarlyQueue();
  announce(
    app.pythonReady
      ? "Queued: it is sent once the session is open."
      : "Queued: it is sent as soon as the app is ready.",
  );
  return true;
}

function renderEarlyQueue() {
  const label = app.pythonReady ? "Waiting for the session" : "Waiting for Python";
  ui.composer.renderQueue(earlyQueue.map((text, i) => ({ id: `early-${i}`, text, mode: "follow_up", label })));
}

// Messages sent before Python was ready, or while a session was opening: sent into the session
// open once no switch is under way (one sender at a time, in order).
let sendingEarly = false;
async function sendEarlyMessages() {
  if (sendingEarly || !app.pythonReady) return;
  sendingEarly = true;
  try {
    await routesSettled();
    while (earlyQueue.length) {
      const text = earlyQueue[0];
      const accepted = await deliver(text, "follow_up", app.state?.streaming);
      earlyQueue.shift();
      renderEarlyQueue();
      if (!accepted) {
        ui.composer.restore([text, ...earlyQueue.splice(0)]);
        renderEarlyQueue();
      }
    }
    ui.composer.setState(app.state ?? {});
  } finally {
    sendingEarly = false;
  }
}

// Keys kept "for this tab only": sessionStorage, under one prefix (gone when the tab closes).
function tabKeyStore() {
  const PREFIX = "py-agent.key.";
  const names = () => Object.keys(sessionStorage).filter((k) => k.startsWith(PREFIX));
  return {
    entries: () =>
      JSON.stringify(Object.fromEntries(names().map((k) => [k.slice(PREFIX.length), sessionStorage.getItem(k)]))),
    set: (provider, key) => sessionStorage.setItem(PREFIX + provider, key),
    remove: (provider) => sessionStorage.removeItem(PREFIX + provider),
    clear: () => {
      for (const k of names()) sessionStorage.removeItem(k);
    },
  };
}

function fail(message) {
  // The app may have been drawn early (drawEarly): the error is on the boot screen.
  $("#boot-screen").hidden = false;
  $("#app").hidden = true;
  const box = $("#boot-error");
  if (box) {
    $("#boot-error-summary").textContent = message;
    box.hidden = false;
  }
  document.documentElement.dataset.app = "error";
}

function applyTheme(theme) {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

// ---------------------------------------------------------------------------------------------
// UI

const ui = {};

function buildUi() {
  early.release(); // web/boot/early.js's handlers stop: the views below handle the same elements
  ui.chat = new ChatView({
    scroller: $("#scroller"),
    transcript: $("#transcript"),
    onRetry: (entryId) => run(() => sendLike("retry", { entry_id: entryId })),
    onEdit: (entryId, text) => run(() => sendLike("edit", { entry_id: entryId, text })),
    onSwitch: (entryId) => run(() => py("switch_branch", { entry_id: entryId })),
    onJump: (show) => ($("#jump").hidden = !show),
  });
  $("#jump").addEventListener("click", () => ui.chat.scrollToBottom());
  ui.switchStatus = h("span", { id: "switch-status", class: "switch-status", role: "status", hidden: true });
  $("#session-title").after(ui.switchStatus);
  ui.composer = new Composer({
    form: $("#composer"),
    input: $("#input"),
    sendButton: $("#send-button"),
    stopButton: $("#stop-button"),
    queueList: $("#queue"),
    hint: $("#composer-hint"),
    onSubmit: submit,
    onAbort: () => py("abort"),
    onUnqueue: async (id) => {
      if (id.startsWith("early-")) {
        const [text] = earlyQueue.splice(Number(id.slice(6)), 1);
        renderEarlyQueue();
        if (text !== undefined) ui.composer.restore([text]);
        return;
      }
      const r = await py("unqueue", { id });
      if (r.text) ui.composer.restore([r.text]);
    },
    onSendAttachments: sendAttachments,
  });
  const sessionActions = {
    onOpen: () => closeSidebar(),
    onRename: (s) => renameSession(s.id, s.name ?? s.title),
    onExport: (s) => exportSession(s.id),
    onDelete: (s) => deleteSession(s.id, s.title),
  };
  if (early.sessions) {
    // The list web/boot/early.js drew (and its search box's handlers), with the app's actions.
    Object.assign(early.hooks, sessionActions);
    ui.sessions = early.sessions;
  } else ui.sessions = new SessionList({ root: $("#session-list"), search: $("#session-search"), ...sessionActions });

  $("#model-button").addEventListener("click", chooseModel);
  $("#thinking-select").addEventListener("change", (event) =>
    run(() => py("set_thinking", { level: /** @type {HTMLSelectElement} */ (event.target).value })),
  );
  $("#new-chat").addEventListener("click", newChat);
  $("#open-settings").addEventListener("click", async () => {
    await openSettings({ app });
    // Opened from the sessions drawer on a phone: closing Settings returns to the chat.
    if (PHONE.matches) {
      closeSidebar();
      ui.composer.focus();
    }
  });
  $("#rename-session").addEventListener(
    "click",
    () => app.state?.persisted && renameSession(app.currentId, app.state.name ?? app.state.title),
  );
  $("#open-sidebar").addEventListener("click", toggleSidebar);
  $("#close-sidebar").addEventListener("click", closeSidebar);
  $("#scrim").addEventListener("click", closeSidebar);
  PHONE.addEventListener("change", (event) => !event.matches && closeSidebar()); // no drawer on wider screens
  $("#import-session").addEventListener("click", () => $("#import-file").click());
  $("#import-file").addEventListener("change", importFile);
  $("#side-panel-close").addEventListener("click", () => closePanel());
  buildSessionMenu();

  document.addEventListener("keydown", globalKeys);
  window.addEventListener("hashchange", () => (app.routable ? navigate() : previewFromHash()));

  on("session_state", onSessionState);
  on("transcript", (p) => {
    ui.chat.setTranscript(p.sessionId, p.items);
    updateWelcome();
  });
  on("append", (p) => {
    if (p.sessionId !== ui.chat.sessionId) return; // the session being left, while another one opens
    if (p.item.message?.role === "assistant") streamEpoch += 1;
    ui.chat.append(p.item);
    updateWelcome();
  });
  on("stream", scheduleStream);
  on("tool", (p) => p.sessionId === ui.chat.sessionId && ui.chat.setToolStatus(p));
  on("notice", (p) => {
    if (p.id && p.level === "info" && p.id === "save-error") {
      dismiss("save-error");
      toast(p.text, "info");
    } else toast(p.text, p.level, { id: p.id ?? null });
  });
  on("unsent", (p) => {
    ui.composer.restore(p.texts);
    toast("The queued messages were not delivered: they are back in the message box.", "info");
  });
  on("persisted", onPersisted);
  on("sessions_changed", () => {
    clearTimeout(ui.refreshTimer);
    ui.refreshTimer = setTimeout(() => ui.sessions.refresh(), 60);
  });
  on("key_rejected", onKeyRejected);
  on("catalog_changed", () => updateWelcome(true));
  on("panel", onPanel);
  on("confirm", async (p) => {
    if (p.choices) {
      const choice = await choiceDialog(p.message, { title: p.title, choices: p.choices });
      py("answer", { id: p.id, ok: choice !== null, choice });
      return;
    }
    const ok = await confirmDialog(p.message, { title: p.title, confirmLabel: "Allow" });
    py("answer", { id: p.id, ok });
  });
}

// What needs Python: the sessions list from it, the welcome screen (its providers).
function wirePython() {
  // The list as the first screen drew it from IndexedDB until then (web/boot/early.js): Python's
  // reading of it waits until the app is ready.
  afterStart.then(() => ui.sessions.refresh());
  buildWelcome();
}

async function run(fn) {
  try {
    return await fn();
  } catch (error) {
    toast(error.message || String(error), "error");
    return undefined;
  }
}

// ---- the open session ----

function onSessionState(state) {
  const wasStreaming = app.state?.streaming;
  app.state = state;
  app.currentId = state.sessionId;
  const title = state.persisted ? state.title || "Untitled" : "New chat";
  $("#session-title").replaceChildren(state.persisted ? nameNode(title) : title);
  document.title = state.persisted ? `${nameText(title)} · py-agent` : "py-agent";
  $("#rename-session").hidden = !state.persisted;
  /** @type {HTMLButtonElement} */ ($("#session-menu-btn")).disabled = !state.persisted;
  const u = state.usage;
  const usage = $("#session-usage");
  usage.hidden = !(u.input || u.output);
  usage.textContent = `↑${formatTokens(u.input)} ↓${formatTokens(u.output)}${u.cost ? ` · ${formatCost(u.cost)}` : ""}`;
  usage.title = `This session: ${u.input} input, ${u.output} output, ${u.cacheRead} cache-read, ${u.cacheWrite} cache-write tokens; ${formatCost(u.cost)}`;
  usage.setAttribute(
    "aria-label",
    `Session usage: ${u.input} input tokens, ${u.output} output tokens, cost ${formatCost(u.cost)}`,
  );
  updateModel(state.model, state);
  showCompacting(state.compacting);
  const summarizeLeft = /** @type {HTMLButtonElement | null} */ ($("#summarize-left"));
  if (summarizeLeft) summarizeLeft.disabled = !state.leftBranch;
  ui.composer.setState(state);
  ui.chat.setStreaming(state.streaming);
  if (!state.streaming && wasStreaming) {
    streamEpoch += 1;
    ui.chat.clearStreaming();
  }
  const banner = $("#banner");
  banner.replaceChildren();
  banner.hidden = !state.readOnly;
  if (state.readOnly) {
    const take = h("button", { type: "button", class: "btn small", text: "Edit here instead" });
    take.addEventListener("click", () => takeOver(state.sessionId));
    banner.append(h("span", { text: state.readOnlyReason }), take);
  }
  ui.sessions.setCurrent(state.persisted ? state.sessionId : null);
  updateWelcome();
  if (ui.switching) applySwitching(); // the session being left changed: the switch still shows
}

function updateModel(model, state) {
  if (!model) return;
  const button = /** @type {HTMLButtonElement} */ ($("#model-button"));
  button.replaceChildren(
    h("span", {
      class: `model-dot ${model.demo ? "demo" : model.requiresKey && !model.hasKey ? "nokey" : ""}`,
      "aria-hidden": "true",
    }),
    h("span", { class: "model-label", text: model.name }),
    icon("chevron", "icon chev-down"),
  );
  button.setAttribute("aria-label", `Model: ${model.name} (${model.providerLabel}). Change model (Ctrl+K)`);
  button.title = `${model.providerLabel} · ${model.id}`;
  button.disabled = Boolean(state?.streaming);
  const select = /** @type {HTMLSelectElement} */ ($("#thinking-select"));
  const levels = state?.thinkingLevels ?? model.thinkingLevels ?? ["off"];
  const names = {
    off: "Thinking off",
    minimal: "Minimal thinking",
    low: "Low thinking",
    medium: "Medium thinking",
    high: "High thinking",
    xhigh: "Extra-high thinking",
  };
  select.replaceChildren(...levels.map((l) => h("option", { value: l, text: names[l] ?? l })));
  select.value = state?.thinkingLevel ?? "off";
  select.disabled = Boolean(state?.streaming);
  $("#thinking-wrap").hidden = levels.length <= 1;
}

// ---- which session is open: the address says, the router follows ----
//
// Every change of the address starts a route, which supersedes any route under way: a route
// checks after each wait that it is still the newest before it asks Python for anything, and
// Python shows only the newest switch it was asked for (py_agent/app/controller.py: an open that
// ends after a later one answers "superseded"). So the session open is the one the address names,
// whatever the order in which the reads end. While a route runs, the page shows where it is going
// (showSwitching): the heading, an "Opening…" status, the controls of the open session disabled;
// a message sent meanwhile is queued and sent into the session once it is open.

const NEW_CHAT = Symbol("new chat"); // showSwitching's title for a new chat (not a session's title)
let routeSeq = 0;
let routing = null; // the newest route while it runs
let pythonSwitches = 0; // new_session / open_session asked of Python and not answered yet

function navigate() {
  const seq = ++routeSeq;
  const done = route(seq)
    .catch((error) => toast(error.message || String(error), "error"))
    .finally(() => {
      if (seq !== routeSeq) return;
      routing = null;
      endSwitching();
      if (earlyQueue.length) sendEarlyMessages();
    });
  routing = done;
  return done;
}

/** Resolves once no route runs (the newest one has ended). */
async function routesSettled() {
  while (routing) await routing;
}

async function switchSession(command, args = {}) {
  pythonSwitches += 1;
  try {
    return await py(command, args);
  } finally {
    pythonSwitches -= 1;
  }
}

// Whether the screen shows the open session as Python has it, with no switch on its way there.
function showsOpenSession() {
  return !pythonSwitches && !ui.chat.previewing && ui.chat.sessionId === app.currentId;
}

async function route(seq) {
  const newest = () => seq === routeSeq;
  const id = hashSessionId();
  if (id) {
    if (id === app.currentId && showsOpenSession()) return;
    showSwitching("Opening…");
    await previewSession(id);
    if (!newest()) return;
    // The lock first: a tab without it opens the session read-only and recovers nothing (the
    // tab holding it may still be streaming the reply a recovery would duplicate).
    const got = await lockSession(id, { onLost: () => lostLock(id) });
    if (!newest()) {
      if (got) releaseSession(id);
      return;
    }
    const result = await switchSession("open_session", { id, read_only: !got });
    if (!newest() || result.superseded) return;
    if (result.found === false) {
      toast("That session does not exist here (it may have been deleted).", "warn");
      history.replaceState(null, "", "#/");
      await switchSession("new_session");
      if (newest()) releaseSession();
      return;
    }
    // The lock's state, unless the session opened in it already (it is told otherwise when it was
    // open before): one round trip less before the app is ready.
    if (result.readOnly !== !got) await py("lock_state", { session_id: id, held: got });
  } else {
    if (app.state && !app.state.persisted && app.currentId && showsOpenSession()) return;
    // The empty chat at once (Python may be busy a while, e.g. still reading a long session).
    ui.chat.showPreview(null, []);
    showSwitching("Starting a new chat…", NEW_CHAT);
    await switchSession("new_session");
    if (newest()) releaseSession();
  }
  if (newest()) closeSidebar();
}

// A switch under way: the heading says where to (the session's title once its preview is read),
// a status says what is happening, and the open session's controls wait.
function showSwitching(status, title = null) {
  ui.switching = { status, title: title ?? ui.switching?.title ?? null };
  applySwitching();
}

function applySwitching() {
  const { status, title } = ui.switching;
  document.documentElement.dataset.switching = "true";
  ui.switchStatus.textContent = status;
  ui.switchStatus.hidden = false;
  if (title === NEW_CHAT) setHeading("New chat", false);
  else if (title !== null) setHeading(title);
  $("#transcript").setAttribute("aria-busy", "true");
  for (const control of /** @type {(HTMLButtonElement | HTMLSelectElement)[]} */ ([
    $("#model-button"),
    $("#thinking-select"),
    $("#session-menu-btn"),
  ]))
    control.disabled = true;
  $("#rename-session").hidden = true;
  $("#session-usage").hidden = true;
  if (ui.chat.previewing) ui.sessions.setCurrent(ui.chat.sessionId);
}

function setHeading(title, session = true) {
  $("#session-title").textContent = title;
  document.title = session ? `${title} · py-agent` : "py-agent";
}

// Back to the open session's own state (its transcript came from Python with it).
function endSwitching() {
  if (!ui.switching) return;
  ui.switching = null;
  delete document.documentElement.dataset.switching;
  ui.switchStatus.textContent = "";
  ui.switchStatus.hidden = true;
  if (!ui.chat.previewing) $("#transcript").removeAttribute("aria-busy");
  if (app.state) onSessionState(app.state);
}

// A long session takes Python a while to load (every entry is read and checked): the page draws
// the session's last messages from IndexedDB itself first (web/boot/idb.js, recentMessages), and lets
// the browser paint them before Python starts, whose transcript then replaces them.
const PREVIEW_MESSAGES = 80;

async function previewSession(id, { paint = true } = {}) {
  if (!app.db || (ui.chat.previewing && ui.chat.sessionId === id)) return;
  let preview = null;
  try {
    preview = await app.db.recentMessages(id, PREVIEW_MESSAGES);
  } catch {
    return; // Python reads it too, and says what is wrong
  }
  const still = /^#\/s\/(.+)$/.exec(location.hash);
  if (!preview || (app.currentId === id && !ui.chat.previewing) || !still || decodeURIComponent(still[1]) !== id)
    return;
  ui.chat.showPreview(id, preview.items); // the rest comes with Python's session state
  const title = preview.meta?.title || "Untitled";
  if (ui.switching) showSwitching(ui.switching.status, title);
  else setHeading(title);
  ui.sessions.setCurrent(id);
  // After the next paint (a rAF callback runs just before it).
  if (paint) await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

function lostLock(id) {
  return py("lock_state", {
    session_id: id,
    held: false,
    reason: "This session was opened for editing in another tab, so it is read-only here.",
  });
}

async function acquireLock(id) {
  const got = await lockSession(id, { onLost: () => lostLock(id) });
  await py("lock_state", { session_id: id, held: got });
}

async function takeOver(id) {
  const got = await lockSession(id, {
    steal: true,
    onLost: () =>
      py("lock_state", {
        session_id: id,
        held: false,
        reason: "This session was opened for editing in another tab, so it is read-only here.",
      }),
  });
  await py("lock_state", { session_id: id, held: got });
  if (got) {
    // Reload it from storage: the other tab may have added messages.
    app.currentId = null;
    await py("open_session", { id, reload: true });
    await py("lock_state", { session_id: id, held: true });
  }
}

async function onPersisted(p) {
  app.init.firstRun = false;
  if (p.sessionId !== app.currentId) return;
  history.replaceState(null, "", `#/s/${encodeURIComponent(p.sessionId)}`);
  acquireLock(p.sessionId);
  if (!app.init.settings.persistAsked) {
    app.init.settings.persistAsked = true;
    py("set_setting", { key: "persistAsked", value: true });
    requestPersistence({ announceResult: true });
  } else requestPersistence();
}

function newChat() {
  closeSidebar();
  if (location.hash !== "#/" && location.hash !== "") location.hash = "#/";
  else if (app.routable) navigate();
  ui.composer.focus();
}

// ---- sending ----

async function sendLike(command, args) {
  let result = await py(command, args);
  performance.mark("send:sent"); // bench/first_token.py
  if (result.status === "need_key") {
    const saved = await askForKey(result.provider);
    if (!saved) return false;
    result = await py(command, args);
  }
  if (result.status === "sent") ui.chat.scrollToBottom();
  return result.status === "sent";
}

// A message with attachments: the composer shows the answer (sent, confirm_images, refused).
async function sendAttachments(text, attachments, confirmImages) {
  await routesSettled(); // into the session being opened, once it is
  try {
    let result = await py("send", { text, attachments, confirm_images: confirmImages });
    if (result.status === "need_key") {
      if (!(await askForKey(result.provider))) return { status: "cancelled" };
      result = await py("send", { text, attachments, confirm_images: confirmImages });
    }
    if (result.status === "sent") ui.chat.scrollToBottom();
    return result;
  } catch (error) {
    toast(error.message, "error");
    return { status: "failed" };
  }
}

async function submit(text, mode, streaming) {
  if (!app.pythonReady || routing) return queueEarly(text);
  return deliver(text, mode, streaming);
}

async function deliver(text, mode, streaming) {
  try {
    if (streaming) {
      const r = await py("queue", { text, mode });
      if (r.status === "queued") {
        announce(mode === "follow_up" ? "Queued as a follow-up." : "Queued as steering.");
        return true;
      }
      if (r.status !== "idle") return false;
    }
    return await sendLike("send", { text });
  } catch (error) {
    toast(error.message, "error");
    return false;
  }
}

async function onKeyRejected(p) {
  const request = await py("key_request", { provider: p.provider });
  const saved = await askForKey(request, {
    reason: `${request.label} rejected the key: ${friendlyError(p.error)}`,
    confirmLabel: "Save",
  });
  if (saved) toast("The new key is saved. Press Retry to send again.", "info");
}

// ---- streaming: one snapshot per animation frame ----

let streamScheduled = false;
let streamEpoch = 0;
let streamPulled = 0; // when the last pull ended (performance.now())
// A reply's first text, or text after a pause: pulled at once rather than at the next frame
// (bench/first_token.py); a fast stream is pulled once per frame.
const STREAM_IDLE_MS = 20;

let streamAgain = false; // Python told of more while a pull was under way

function scheduleStream() {
  if (streamScheduled) {
    // Python tells the page once until it pulls: if that pull had already read the reply, this
    // news would be lost, and the page would show nothing more until the reply ends.
    streamAgain = true;
    return;
  }
  streamScheduled = true;
  if (performance.now() - streamPulled > STREAM_IDLE_MS) queueMicrotask(pullStream);
  else requestAnimationFrame(pullStream);
}

async function pullStream() {
  const epoch = streamEpoch;
  const started = performance.now();
  let result;
  try {
    result = await py("streaming_snapshot", { since: ui.chat.streamRevision });
  } finally {
    streamScheduled = false;
    streamPulled = performance.now();
    if (streamAgain) {
      streamAgain = false;
      scheduleStream();
    }
  }
  const shown = result.sessionId === app.currentId && result.sessionId === ui.chat.sessionId;
  if (epoch !== streamEpoch || !shown || !result.snapshot) return;
  const pulled = performance.now();
  ui.chat.showStreaming(result.snapshot);
  updateWelcome();
  // bench/streaming.py sets app.frameTimings to an array to see what each frame costs.
  app.frameTimings?.push({ started, pulled, rendered: performance.now(), chars: ui.chat.streamChars });
}

// ---- model ----

async function chooseModel() {
  if (routing) return; // the model button waits for the session being opened
  const current = app.state?.model;
  const model = await pickModel(current);
  if (model) await run(() => py("set_model", { provider: model.provider, id: model.id }));
  ui.composer.focus();
}

// ---- sessions ----

async function renameSession(id, current) {
  const name = await promptDialog(current ? ["Now: ", nameNode(current)] : "", {
    title: "Rename session",
    value: current ?? "",
    label: "Session name",
  });
  if (name === null) return;
  await run(() => py("rename_session", { id, name }));
  ui.sessions.refresh();
}

async function deleteSession(id, title) {
  const ok = await confirmDialog(
    [
      "“",
      nameNode(title || "Untitled"),
      "” and all its messages are deleted from this browser. Export it first if you want to keep a copy.",
    ],
    {
      title: "Delete session?",
      confirmLabel: "Delete",
      danger: true,
    },
  );
  if (!ok) return;
  // Deleting the open session opens a new chat; the list's other rows go at once.
  if (id === app.currentId) showSwitching("Deleting…");
  const result = await run(() => py("delete_session", { id }));
  if (result?.wasCurrent) {
    releaseSession();
    history.replaceState(null, "", "#/");
  }
  if (!routing) endSwitching();
  ui.sessions.refresh();
}

async function exportSession(id) {
  const result = await run(() => py("export_session", { id }));
  if (!result) return;
  const blob = new Blob([result.text], { type: "application/x-ndjson" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: result.filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  toast(["Exported “", nameNode(result.filename), "” (pi's session format: open it with pi's CLI)."], "info");
}

async function importFile(event) {
  const file = event.target.files?.[0];
  event.target.value = "";
  if (!file) return;
  if (file.size > 200e6) {
    toast("This file is too large to import (over 200 MB).", "error");
    return;
  }
  const text = await file.text();
  showSwitching(`Importing “${file.name}”…`);
  const result = await run(() => py("import_session", { text }));
  if (!result) {
    if (!routing) endSwitching();
    return;
  }
  for (const warning of result.warnings.slice(0, 3)) toast(warning, "warn");
  if (result.warnings.length > 3)
    toast(`…and ${result.warnings.length - 3} more repairs while reading the file.`, "warn");
  toast(["Imported “", nameNode(result.title || "Untitled"), "”."], "info");
  location.hash = `#/s/${encodeURIComponent(result.sessionId)}`; // its route shows the open, then ends the switch
}

function buildSessionMenu() {
  const button = $("#session-menu-btn");
  const menu = $("#session-menu");
  /** @type {[string, string, () => unknown, string?][]} label, icon, action, id */
  const items = [
    ["Files…", "folder", openFiles],
    ["Export as .jsonl", "download", () => exportSession(app.currentId)],
    ["System prompt…", "edit", editSystemPrompt],
    ["Compact…", "compress", compactSession],
    ["Summarize the version you left…", "compress", summarizeLeftBranch, "summarize-left"],
    ["Delete session", "trash", () => deleteSession(app.currentId, app.state?.title)],
  ];
  menu.replaceChildren(
    ...items.map(([label, iconName, action, id], i) => {
      const b = h(
        "button",
        { type: "button", role: "menuitem", class: i === items.length - 1 ? "danger" : "", id: id ?? null },
        icon(iconName),
        label,
      );
      b.addEventListener("click", () => {
        close();
        action();
      });
      return b;
    }),
  );
  const close = () => {
    menu.hidden = true;
    button.setAttribute("aria-expanded", "false");
  };
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    const opening = menu.hidden;
    menu.hidden = !opening;
    button.setAttribute("aria-expanded", String(opening));
    if (opening) menu.querySelector("button").focus();
  });
  menu.addEventListener("keydown", (event) => {
    const all = /** @type {HTMLButtonElement[]} */ ([...menu.querySelectorAll("button:not(:disabled)")]);
    const i = all.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      close();
      button.focus();
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      all[(i + 1) % all.length].focus();
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      all[(i - 1 + all.length) % all.length].focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (!menu.hidden && !menu.contains(/** @type {Node} */ (event.target))) close();
  });
}

// Summarize the earlier messages now (as /compact [instructions] typed in the composer does).
async function compactSession() {
  const { promptDialog } = await import("./ui/dialogs.js");
  const instructions = await promptDialog(
    "The model summarizes the earlier messages; from then on it reads the summary and the latest messages instead. Nothing is deleted: every message stays in the session and in exports.",
    { title: "Compact this conversation", label: "Focus of the summary (optional)", confirmLabel: "Compact" },
  );
  if (instructions === null) return;
  await run(() => sendLike("compact", { instructions }));
}

// After switching to another version of a message: a summary of the version left, which the
// model then reads here (pi's tree navigation offers the same).
async function summarizeLeftBranch() {
  const { promptDialog } = await import("./ui/dialogs.js");
  const instructions = await promptDialog(
    "The model summarizes what was said and done in the version you switched away from; the summary is added here, so the conversation can build on it.",
    { title: "Summarize the version you left", label: "Focus of the summary (optional)", confirmLabel: "Summarize" },
  );
  if (instructions === null) return;
  await run(() => sendLike("summarize_left_branch", { instructions }));
}

// While a compaction's summary is requested: what runs, and Stop (the composer's Stop does the same).
function showCompacting(reason) {
  let status = $("#compaction-status");
  if (!reason) {
    if (status) status.hidden = true;
    return;
  }
  if (!status) {
    const stop = h("button", { type: "button", class: "btn small", text: "Stop" });
    stop.addEventListener("click", () => py("abort"));
    status = h("div", { id: "compaction-status", class: "banner compaction-status", role: "status" }, h("span"), stop);
    $("#banner").after(status);
  }
  const text = {
    threshold: "The conversation is near the model's context limit: summarizing the earlier messages…",
    overflow: "The model's context was full: summarizing the earlier messages…",
    branch: "Summarizing the version you left…",
  };
  status.firstChild.textContent = text[reason] ?? "Summarizing the earlier messages…";
  status.hidden = false;
}

// The session's workspace in the side panel (also opened by a tool card's file chips).
async function openFiles() {
  const reply = await run(() => py("panel_message", { panel: "workspace", data: { type: "open" } }));
  if (reply && (!reply.handled || reply.result === false))
    toast("This chat has no workspace: turn on the workspace tools in Settings → Tools.", "info");
}

async function editSystemPrompt() {
  const { createDialog, showModal } = await import("./ui/dialogs.js");
  const { dialog, body } = createDialog({ title: "System prompt of this session", className: "prompt-dialog" });
  const area = h("textarea", { class: "input", rows: "8", "aria-label": "System prompt" });
  area.value = app.state?.systemPrompt ?? "";
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  const save = h("button", { type: "button", class: "btn primary", text: "Save" });
  body.append(
    h("p", {
      class: "muted",
      text: "The model receives this before the conversation. It is saved with the session; a change applies from the next message.",
    }),
    area,
    h("div", { class: "dialog-actions" }, cancel, save),
  );
  cancel.addEventListener("click", () => dialog.close("cancel"));
  save.addEventListener("click", () => dialog.close("ok"));
  const result = showModal(dialog);
  area.focus();
  if ((await result) === "ok") await run(() => py("set_system_prompt", { prompt: area.value }));
  dialog.remove();
}

// ---- sidebar, panels, keys ----

function toggleSidebar() {
  const open = !document.body.classList.contains("sidebar-open");
  document.body.classList.toggle("sidebar-open", open);
  $("#chat").inert = open; // the open drawer is modal: Tab stays in it (closed, CSS hides it)
  $("#open-sidebar").setAttribute("aria-expanded", String(open));
  if (open) $("#session-search").focus();
}

function closeSidebar() {
  if (!document.body.classList.contains("sidebar-open")) return;
  document.body.classList.remove("sidebar-open");
  $("#chat").inert = false;
  $("#open-sidebar").setAttribute("aria-expanded", "false");
}

const mountedPanels = new Map();

function onPanel(p) {
  const definition = getPanel(p.panel);
  if (!definition) return;
  const body = $("#side-panel-body");
  let mounted = mountedPanels.get(p.panel);
  if (!mounted) {
    const container = h("div", { class: "panel-view", dataset: { panel: p.panel } });
    body.append(container);
    const api = { send: (data) => py("panel_message", { panel: p.panel, data }), close: () => closePanel() };
    definition.mount(container, api);
    mounted = { container, definition };
    mountedPanels.set(p.panel, mounted);
  }
  if (p.action === "suggest") {
    // Offered, not asked for (a file a tool wrote): beside the chat where there is room; on a phone
    // the panel would cover the conversation, so a notice offers it instead.
    if (!PHONE.matches) showPanel(p.panel, definition);
    else if ($("#side-panel").hidden)
      toast(`${p.what ? `${p.what} is ready` : "Files changed"} in Files.`, "info", {
        id: `suggest-${p.panel}`,
        timeout: 15000,
        action: { label: "Show", run: () => showPanel(p.panel, definition) },
      });
  } else if (p.action === "open") showPanel(p.panel, definition);
  else if (p.action === "message") definition.onMessage?.(p.data);
}

function showPanel(panelId, definition) {
  for (const [id, m] of mountedPanels) m.container.hidden = id !== panelId;
  $("#side-panel-title").textContent = definition.title ?? panelId;
  $("#side-panel").hidden = false;
  document.body.classList.add("panel-open");
  definition.onOpen?.();
}

function closePanel() {
  $("#side-panel").hidden = true;
  document.body.classList.remove("panel-open");
  for (const m of mountedPanels.values()) m.definition.onClose?.();
}

function globalKeys(event) {
  const mod = event.ctrlKey || event.metaKey;
  if (mod && event.key.toLowerCase() === "k") {
    event.preventDefault();
    if (!document.querySelector("dialog[open]") && !app.state?.streaming) chooseModel();
  } else if (mod && event.shiftKey && event.key.toLowerCase() === "o") {
    event.preventDefault();
    newChat();
  } else if (event.key === "Escape" && !document.querySelector("dialog[open]")) {
    if (app.state?.streaming) {
      event.preventDefault();
      py("abort");
    } else if (document.body.classList.contains("sidebar-open")) closeSidebar();
  }
}

// ---------------------------------------------------------------------------------------------
// Welcome (first run) and the empty state

// The first four run the demo agent's scripts (py_agent/app/demo.py, AGENT_SCRIPTS) with the real tools.
const SUGGESTIONS = [
  ["Watch the agent work (files, Python, JavaScript, subagents)", "Show me the agent at work on a sample data file"],
  ["Analyse a CSV with Python", "Analyse a sample CSV file with Python"],
  ["Draw a chart with JavaScript", "Draw a chart of the sample data with JavaScript"],
  ["Run subagents in parallel", "Run two subagents in parallel on the sample data"],
  ["Show me what this app can do", "Show me what this app can do"],
  ["Write some code", "Write some code: a debounce helper"],
  ["Give me a long answer", "Give me a long answer"],
  ["Make an error (to try Retry)", "Make an error"],
];

function buildWelcome() {
  const root = $("#welcome");
  root.replaceChildren(
    h(
      "div",
      { class: "welcome-head" },
      h("div", { class: "logo", "aria-hidden": "true", text: "π" }),
      h("h2", { id: "welcome-title", text: "Chat with any model, from this page" }),
    ),
    h(
      "p",
      { class: "welcome-lede", id: "welcome-lede" },
      "py-agent runs entirely in your browser: Python (pi's agent core) on WebAssembly. Bring your own API key — it stays in this browser and goes only to the provider you pick. Conversations are saved here, and export to pi's CLI.",
    ),
    h("h3", { class: "welcome-sub", id: "welcome-sub", text: "Pick a provider to start" }),
    h("ul", { class: "provider-cards", id: "provider-cards", "aria-label": "Providers" }),
    h("p", {
      class: "muted small",
      id: "welcome-note",
      text: "No key yet? The demo model works offline, without one. Your key is asked for when you send your first message.",
    }),
    h("div", { class: "suggestions", id: "suggestions", role: "group", "aria-label": "Suggestions" }),
    // "Open a folder…" (web/files/folder-bar.js fills it).
    h("div", { class: "welcome-folder", id: "welcome-folder", role: "group", "aria-label": "Folder" }),
  );
  renderProviderCards();
}

async function renderProviderCards() {
  cardsStale = false;
  const list = $("#provider-cards");
  const cards = app.init.providers;
  const current = app.state?.model;
  list.replaceChildren(
    ...cards.map((p) => {
      const active = current && current.provider === p.provider;
      const status =
        p.provider === "demo"
          ? "Offline · no key"
          : p.hasKey
            ? "Key saved"
            : p.requiresKey === false
              ? "No key needed"
              : "Needs a key";
      // A custom provider: how many models it has and whether it runs on this computer.
      const detail = p.custom
        ? [p.modelCount === 1 ? "1 model" : `${p.modelCount || "No"} models`, p.local ? "local" : ""]
            .filter(Boolean)
            .join(" · ")
        : p.modelName;
      const button = h(
        "button",
        {
          type: "button",
          class: `provider-card-btn ${active ? "active" : ""} ${p.provider === "demo" ? "demo" : ""}`,
          "aria-pressed": active ? "true" : "false",
          dataset: { provider: p.provider },
        },
        h("span", { class: "pc-name", text: p.provider === "demo" ? "Demo" : p.label }),
        h("span", { class: "pc-model", text: detail }),
        h("span", { class: `pc-status ${p.hasKey || p.provider === "demo" ? "ok" : ""}`, text: status }),
      );
      button.addEventListener("click", async () => {
        // A custom provider whose models are not known yet is set up (or discovered) in Settings.
        if (!p.model) return openSettings({ app, tab: "providers" });
        await run(() => py("set_model", { provider: p.provider, id: p.model }));
        renderProviderCards();
        ui.composer.focus();
      });
      return h("li", {}, button);
    }),
    h(
      "li",
      {},
      (() => {
        const b = h(
          "button",
          { type: "button", class: "provider-card-btn local" },
          h("span", { class: "pc-name", text: "Your own server" }),
          h("span", { class: "pc-model", text: "Ollama, LM Studio, vLLM…" }),
          h("span", { class: "pc-status", text: "Set up" }),
        );
        b.addEventListener("click", () => openSettings({ app, tab: "providers" }));
        return b;
      })(),
    ),
  );
}

// The providers changed while a session was on screen: the cards are drawn again when the welcome returns.
let cardsStale = false;

function updateWelcome(refreshCards = false) {
  const empty = ui.chat?.empty ?? true;
  const welcome = $("#welcome");
  const showWelcome = empty && !(app.state?.persisted ?? false);
  welcome.hidden = !showWelcome;
  if (!showWelcome) {
    if (refreshCards)
      py("key_status").then((s) => {
        app.init.providers = s.providers;
        cardsStale = true;
      });
    return;
  }
  const firstRun = app.init.firstRun;
  welcome.classList.toggle("compact", !firstRun);
  // The same heading on every visit; a first visit also gets the introduction below it.
  $("#welcome-lede").hidden = !firstRun;
  $("#welcome-note").hidden = !firstRun;
  $("#welcome-sub").textContent = firstRun ? "Pick a provider to start" : "Provider";
  const model = app.state?.model;
  const suggestions = $("#suggestions");
  if (model?.demo) {
    suggestions.replaceChildren(
      ...SUGGESTIONS.map(([label, text]) => {
        const b = h("button", { type: "button", class: "suggestion", text: label });
        b.addEventListener("click", () => {
          /** @type {HTMLTextAreaElement} */ ($("#input")).value = text;
          ui.composer.autosize();
          ui.composer.submit("steer");
        });
        return b;
      }),
    );
  } else suggestions.replaceChildren();
  if (refreshCards) {
    py("key_status").then((s) => {
      app.init.providers = s.providers;
      renderProviderCards();
    });
  } else {
    const active = /** @type {HTMLElement | null} */ (document.querySelector(".provider-card-btn.active"))?.dataset
      .provider;
    if (cardsStale || active !== model?.provider) renderProviderCards();
  }
}

main().catch((error) => {
  if (window.pyAgent?.state === "error") {
    // boot.js shows what went wrong while loading Python.
    document.documentElement.dataset.app = "error";
    return;
  }
  console.error("py-agent: the app could not start", error);
  fail(`The app could not start: ${error.message ?? error}`);
});
