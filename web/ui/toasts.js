// @ts-check
// Notices: short messages in a polite live region; errors stay until dismissed. A notice with an
// id replaces the previous one with that id (e.g. one "saving failed" message, not many).
// `text` is a string (its hidden characters shown as codes: it may quote a file name) or nodes
// (a name drawn with nameNode, web/ui/dom.js).

import { h, iconButton, visibleName } from "./dom.js";

const byId = new Map();

export function toast(text, level = "info", { id = null, timeout = null, action = null } = {}) {
  const root = document.getElementById("toasts");
  if (!root) return null;
  if (id && byId.has(id)) byId.get(id).remove();
  const close = iconButton("close", "Dismiss", { class: "small" });
  const el = h(
    "div",
    { class: `toast ${level}`, role: level === "error" ? "alert" : "status" },
    h("span", { class: "toast-text" }, typeof text === "string" ? visibleName(text) : text),
  );
  if (action) {
    const button = h("button", { type: "button", class: "btn small", text: action.label });
    button.addEventListener("click", () => {
      action.run();
      el.remove();
    });
    el.append(button);
  }
  el.append(close);
  close.addEventListener("click", () => el.remove());
  root.append(el);
  if (id) byId.set(id, el);
  const ms = timeout ?? (level === "error" ? 0 : level === "warn" ? 9000 : 5000);
  if (ms) setTimeout(() => el.remove(), ms);
  return el;
}

export function dismiss(id) {
  byId.get(id)?.remove();
  byId.delete(id);
}
