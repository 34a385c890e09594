// @ts-check
// The boot screen (index.html's #boot-screen): the steps' list, the progress bar, the status line, and
// the ready or error box at the end; <html data-state="loading|ready|error">. web/boot/boot.js
// says when each step starts and ends; each step's milliseconds go to window.pyAgent.timings.

import { BootError } from "./boot-error.js";

/** @typedef {import("./boot-error.js").BootStep} BootStep */

/** @type {BootStep[]} */
const STEPS = ["download", "compile", "install", "import"];
const STEP_LABELS = {
  download: "Downloading the Python runtime",
  compile: "Compiling and starting Python",
  install: "Installing py_agent and its packages",
  import: "Importing py_agent",
  app: "Starting the app", // not a step of the list: after the boot (checkAppScripts)
};
// Share of the progress bar that each step fills.
const STEP_WEIGHTS = { download: 45, compile: 30, install: 15, import: 10 };

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const startedAt = performance.now();
/** @type {BootStep | null} */
let currentStep = null;
let failed = false;
/** How far each step is, 0 to 1 (web/boot/boot.js sets the download's and the install's). */
export const stepProgress = Object.fromEntries(STEPS.map((s) => [s, 0]));
/** @type {Record<string, number>} */
const stepStarted = {};
/** @type {Record<string, number>} step -> milliseconds, exposed as window.pyAgent.timings */
export const timings = {};

/** Whether the boot has failed (the error is shown: nothing else changes the screen). */
export function hasFailed() {
  return failed;
}

/** @param {number} n */
export function formatBytes(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`;
}

/** @param {BootStep} step */
function stepItem(step) {
  return /** @type {HTMLElement | null} */ (document.querySelector(`#boot-steps li[data-step="${step}"]`));
}

/**
 * @param {BootStep} step
 * @param {"pending" | "active" | "done" | "failed"} status
 * @param {string} [detail]
 */
export function setStepStatus(step, status, detail) {
  const item = stepItem(step);
  if (!item) return;
  item.dataset.status = status;
  const words = { pending: "waiting", active: "in progress", done: "done", failed: "failed" };
  item.querySelector(".status").textContent = words[status];
  if (status === "active") item.setAttribute("aria-current", "step");
  else item.removeAttribute("aria-current");
  if (detail !== undefined) item.querySelector(".detail").textContent = detail;
}

export function renderProgress() {
  const total = STEPS.reduce((sum, s) => sum + STEP_WEIGHTS[s] * Math.min(1, stepProgress[s]), 0);
  /** @type {HTMLProgressElement} */ ($("boot-progress")).value = Math.round(total);
}

/** @param {BootStep} step */
export function startStep(step) {
  if (failed) return;
  if (currentStep) finishStep(currentStep);
  currentStep = step;
  stepStarted[step] = performance.now();
  setStepStatus(step, "active");
  $("boot-status").textContent = `${STEP_LABELS[step]}…`;
  renderProgress();
}

/**
 * @param {BootStep} step
 * @param {string} [detail]
 */
export function finishStep(step, detail) {
  if (failed || step in timings) return;
  stepProgress[step] = 1;
  timings[step] = Math.round(performance.now() - (stepStarted[step] ?? startedAt));
  setStepStatus(step, "done", detail);
  renderProgress();
}

/** @param {"loading" | "ready" | "error"} state */
function setState(state) {
  document.documentElement.dataset.state = state;
  window.pyAgent.state = state;
  $("boot")?.setAttribute("aria-busy", String(state === "loading"));
}

// What needs a secure context (HTTPS, or localhost) and is left out over plain http from another
// machine: the page still starts and chats without them, and says so.
function featuresNeedingHttps() {
  if (window.isSecureContext) return [];
  const missing = [];
  if (!("serviceWorker" in navigator) || !globalThis.crypto?.subtle) {
    missing.push("offline use and faster later visits (service worker, memory snapshot)");
  }
  if (!navigator.locks) missing.push("one tab at a time editing a session (Web Locks)");
  if (!navigator.clipboard) missing.push("copy buttons (clipboard)");
  return missing;
}

/** @param {string[]} missing */
function httpsNotice(missing) {
  return `Served over plain http: ${missing.join("; ")} need HTTPS. Serve the site over https (or open it as localhost) for them.`;
}

// Once the app is there: the notice under its composer too (the boot screen is gone by then).
/** @param {string[]} missing */
export function showHttpsNotice(missing) {
  const foot = document.querySelector(".composer-foot");
  if (!foot || document.getElementById("https-notice")) return;
  const notice = document.createElement("p");
  notice.id = "https-notice";
  notice.className = "composer-foot";
  notice.setAttribute("role", "note");
  notice.textContent = httpsNotice(missing);
  foot.after(notice);
}

/** @param {{python: string, py_agent: string, pyodide: string, pydantic: string}} versions */
export function showReady(versions) {
  $("version-python").textContent = versions.python;
  $("version-py-agent").textContent = versions.py_agent;
  $("version-pyodide").textContent = versions.pyodide;
  $("version-pydantic").textContent = versions.pydantic;
  window.pyAgent.readyAt = performance.now(); // ms since navigation start (bench/boot.py reads it)
  const seconds = (performance.now() - startedAt) / 1000;
  const missing = featuresNeedingHttps();
  window.pyAgent.needsHttps = missing;
  $("boot-time").textContent = `Loaded in ${seconds.toFixed(1)} s.${missing.length ? ` ${httpsNotice(missing)}` : ""}`;
  $("boot-ready").hidden = false;
  $("boot-status").textContent = `Ready: py_agent ${versions.py_agent} on Python ${versions.python}.`;
  setState("ready");
}

/** @param {any} error a BootError, or whatever else ended the boot */
export function showError(error) {
  if (failed) return;
  failed = true;
  const step = error.step ?? currentStep ?? "download";
  for (const s of STEPS) {
    if (stepItem(s)?.dataset.status === "active") setStepStatus(s, "pending");
  }
  setStepStatus(step, "failed", "");
  $("boot-error-summary").textContent = `${STEP_LABELS[step]} failed. ${error.message ?? error}`;
  const detail = error.detail || error.cause?.stack || (error instanceof BootError ? "" : error.stack);
  $("boot-error-detail").textContent = detail;
  $("boot-error-detail").hidden = !detail;
  $("boot-error-hint").textContent = error.hint ?? "";
  $("boot-error").hidden = false;
  $("boot-status").textContent = "Loading stopped: see the error below.";
  setState("error");
  console.error(error);
}
