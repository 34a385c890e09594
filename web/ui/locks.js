// @ts-check
// One writer per session: the tab that edits a session holds a Web Lock named after it. A second
// tab opening the same session gets it read-only (and can take it over); the first tab is then
// told, and becomes read-only itself. IndexedDB's add() of an existing entry is the backstop.

const PREFIX = "py-agent-session:";
let held = null; // { id, release }

function supported() {
  return Boolean(navigator.locks?.request);
}

/**
 * @param {string} id the session's id
 * @param {{steal?: boolean, onLost?: () => void}} [options] onLost: another tab took the lock over
 */
export async function lockSession(id, { steal = false, onLost } = {}) {
  if (held?.id === id) return true;
  releaseSession();
  if (!supported()) return true;
  return new Promise((resolve) => {
    let release;
    const hold = new Promise((r) => {
      release = r;
    });
    navigator.locks
      .request(PREFIX + id, steal ? { steal: true } : { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(false);
          return undefined;
        }
        held = { id, release };
        resolve(true);
        return hold;
      })
      .catch((error) => {
        // Stolen by another tab: that tab writes now.
        if (held?.id === id) {
          held = null;
          if (error?.name === "AbortError") onLost?.();
        }
        resolve(false);
      });
  });
}

/** Lets the held lock go (only if it is `id`'s, when given). */
export function releaseSession(id = null) {
  if (held && (id === null || held.id === id)) {
    held.release();
    held = null;
  }
}
