// @ts-check
// What the page does about faults, beyond rendering them.
//
// - Retries: while a failed provider request waits to be sent again, a notice says why and for
//   how long (Python's `retry` event, py_agent/app/reliability.py); it goes away when the reply
//   arrives or the run ends.
// - Other tabs of the app (BroadcastChannel, same origin only): when keys change here (saved,
//   deleted, "forget all keys"), the other tabs' key rings follow at once, so a forgotten key is
//   gone from every tab; when a session is saved here, a tab that shows it read-only reloads it
//   (it never writes it: it does not hold the session's lock), and every tab refreshes its list.
//   Messages carry no key, only what changed.

import { on, py, receive } from "./bridge.js";
import { toast, dismiss } from "./toasts.js";

const RETRY_ID = "retry";

on("retry", (p) => toast(p.text, "warn", { id: RETRY_ID, timeout: 120000 }));
on("append", (p) => {
  if (p.item?.message?.role === "assistant") dismiss(RETRY_ID);
});
on("session_state", (state) => {
  if (!state.streaming) dismiss(RETRY_ID);
});

// ---- other tabs ----

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("py-agent") : null;
let savedTimer = null;
let echoing = false; // a list refresh caused by another tab is not announced back to it

function app() {
  return window.pyAgentApp ?? {};
}

if (channel) {
  on("keys_changed", (p) =>
    channel.postMessage({ type: "keys", action: String(p.action), provider: p.provider ?? null }),
  );
  on("sessions_changed", () => {
    if (echoing) return;
    clearTimeout(savedTimer);
    savedTimer = setTimeout(() => channel.postMessage({ type: "sessions", id: app().currentId ?? null }), 50);
  });
  channel.onmessage = async (event) => {
    const data = event.data ?? {};
    try {
      if (data.type === "keys") {
        await py("sync_keys", {
          action: String(data.action),
          provider: typeof data.provider === "string" ? data.provider : null,
        });
      } else if (data.type === "sessions") {
        echoing = true;
        try {
          receive("sessions_changed", "{}"); // refresh this tab's list
        } finally {
          echoing = false;
        }
        const id = typeof data.id === "string" ? data.id : null;
        if (id && id === app().currentId && app().state?.readOnly && !app().state?.streaming) {
          await py("open_session", { id, reload: true, read_only: true });
        }
      }
    } catch (error) {
      // The app may still be starting; the next change brings this tab up to date.
      console.warn("py-agent: could not follow another tab's change:", error?.message ?? error);
    }
  };
}
