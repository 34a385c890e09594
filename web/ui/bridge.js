// @ts-check
// The one channel between the page and Python (py_agent/app/controller.py): `py(command, args)` calls
// WebApp.dispatch with JSON and resolves with its JSON result; Python's events arrive through
// `on(kind, handler)`. Nothing else of the page talks to the interpreter.

/** @type {((command: string, argsJson: string) => Promise<string>) | null} */
let dispatch = null;
/** @type {(value?: unknown) => void} */
let connected = null;
// Commands sent while Python starts (the page is drawn before it is ready) wait for it.
const connecting = new Promise((resolve) => {
  connected = resolve;
});
/** @type {Map<string, Set<(payload: any) => void>>} */
const handlers = new Map();

export class CommandError extends Error {
  /**
   * @param {string} message
   * @param {string} [kind] the Python error's kind, when it has one
   */
  constructor(message, kind) {
    super(message);
    this.name = "CommandError";
    this.kind = kind;
  }
}

/** @param {(command: string, argsJson: string) => Promise<string>} dispatchFn */
export function connect(dispatchFn) {
  dispatch = dispatchFn;
  connected();
}

/** @type {() => void} */
let started = () => {};
/**
 * Resolves once the app is ready (`<html data-app="ready">`, web/app.js `appStarted()`): calls that
 * can wait (the sessions list read again, the MCP servers' registry told of the app) wait for it,
 * so that the page's start does not wait for them.
 */
export const afterStart = new Promise((resolve) => {
  started = () => resolve(undefined);
});

/** The app is ready (web/app.js). */
export function appStarted() {
  started();
}

/** Whether Python is ready to answer (before that, `py()` waits). */
export function pythonReady() {
  return dispatch !== null;
}

// The benchmarks' profile (bench/first_token.py): with `globalThis.pyAgentTrace` an array, every
// command and every event handled is recorded there as [name, start, end] (performance.now()).
const trace = () => globalThis.pyAgentTrace;

/**
 * @param {string} command
 * @param {Record<string, unknown>} [args]
 * @returns {Promise<any>} the command's JSON result
 */
export async function py(command, args = {}) {
  if (!dispatch) await connecting;
  const start = trace() && performance.now();
  const text = await dispatch(command, JSON.stringify(args));
  if (start) trace()?.push([`py:${command}`, start, performance.now()]);
  const result = JSON.parse(text);
  if (result && typeof result === "object" && "error" in result) throw new CommandError(result.error, result.kind);
  return result;
}

/**
 * @param {string} kind
 * @param {(payload: any) => void} handler
 * @returns {() => boolean} removes the handler
 */
export function on(kind, handler) {
  if (!handlers.has(kind)) handlers.set(kind, new Set());
  handlers.get(kind).add(handler);
  return () => handlers.get(kind).delete(handler);
}

// Called by Python (see py_agent/browser/main.py): `kind` and a JSON payload string.
/**
 * @param {string} kind
 * @param {string} payloadJson
 */
export function receive(kind, payloadJson) {
  let payload;
  try {
    payload = JSON.parse(payloadJson);
  } catch {
    return;
  }
  const start = trace() && performance.now();
  for (const handler of handlers.get(kind) ?? []) {
    try {
      handler(payload);
    } catch (error) {
      console.error(`py-agent: ${kind} handler failed`, error);
    }
  }
  if (start) trace()?.push([`on:${kind}`, start, performance.now()]);
}
