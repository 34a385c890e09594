// @ts-check
// The boot's error: what the boot screen shows when a step fails (web/boot/boot-screen.js), with the
// step, a hint (the fix) and a detail; and the hints that several steps give.

/** @typedef {"download" | "compile" | "install" | "import" | "app"} BootStep */

export class BootError extends Error {
  /**
   * @param {string} message
   * @param {{step?: BootStep, hint?: string, detail?: string, cause?: unknown}} [options]
   */
  constructor(message, { step, hint = "", detail = "", cause } = {}) {
    super(message, { cause });
    this.name = "BootError";
    this.step = step; // the step that failed, when it is not the current one
    this.hint = hint;
    this.detail = detail;
    /** @type {{cause: string, message: string}[] | undefined} what the host did wrong (web/boot/host-faults.js) */
    this.faults = undefined;
  }
}

/**
 * The error of a step that Python failed: the last line of its traceback.
 * @param {any} cause a PythonError
 */
export function pythonRaised(cause) {
  const lines = String(cause.message).trim().split("\n");
  const last = lines.reverse().find((line) => line && !line.startsWith(" ")) ?? "";
  return new BootError(`Python raised ${last}`, {
    cause,
    detail: cause.message,
    hint: `The runtime or a package may be damaged. ${incompleteSiteHint()}`,
  });
}

export function incompleteSiteHint() {
  return "The site's files are incomplete or damaged: rebuild with `python3 build.py` and copy the whole static/ folder again.";
}

export function networkHint() {
  return "Check the connection to this site and reload the page.";
}
