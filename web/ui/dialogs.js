// @ts-check
// Modal dialogs on the native <dialog> element: focus is trapped and Escape closes them.
// A dialog's text is a string or nodes (a name drawn with nameNode, web/ui/dom.js).

import { h, iconButton } from "./dom.js";

let counter = 0;

export function createDialog({ title, className = "", description = "" }) {
  counter += 1;
  const titleId = `dialog-title-${counter}`;
  const descId = `dialog-desc-${counter}`;
  const close = iconButton("close", "Close", { class: "dialog-close" });
  const body = h("div", { class: "dialog-body" });
  const dialog = h(
    "dialog",
    {
      class: `dialog ${className}`.trim(),
      "aria-labelledby": titleId,
      ...(description ? { "aria-describedby": descId } : {}),
    },
    h("header", { class: "dialog-head" }, h("h2", { id: titleId, text: title }), close),
    description ? h("p", { id: descId, class: "dialog-desc", text: description }) : null,
    body,
  );
  close.addEventListener("click", () => dialog.close("cancel"));
  dialog.addEventListener("click", (event) => {
    // A click on the backdrop (outside the dialog box) closes it.
    if (event.target !== dialog) return;
    const r = dialog.getBoundingClientRect();
    const inside =
      event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
    if (!inside) dialog.close("cancel");
  });
  document.body.append(dialog);
  return { dialog, body, setTitle: (text) => (dialog.querySelector("h2").textContent = text) };
}

export function showModal(dialog) {
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

export async function confirmDialog(text, { title = "Are you sure?", confirmLabel = "OK", danger = false } = {}) {
  const { dialog, body } = createDialog({ title, className: "small-dialog" });
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  const ok = h("button", { type: "button", class: `btn ${danger ? "danger" : "primary"}`, text: confirmLabel });
  body.append(h("p", {}, text), h("div", { class: "dialog-actions" }, cancel, ok));
  cancel.addEventListener("click", () => dialog.close("cancel"));
  ok.addEventListener("click", () => dialog.close("ok"));
  const result = showModal(dialog);
  ok.focus();
  const value = await result;
  dialog.remove();
  return value === "ok";
}

/**
 * A question with its own buttons (the first one the safe answer, focused; the last one the
 * primary): the value chosen, or null when the dialog was closed.
 * @param {string} text
 * @param {{title?: string, choices: {value: string, label: string}[]}} options
 * @returns {Promise<string | null>}
 */
export async function choiceDialog(text, { title, choices }) {
  const { dialog, body } = createDialog({ title, className: "small-dialog" });
  const buttons = choices.map(({ value, label }, i) => {
    const kind = i === 0 ? "ghost" : i === choices.length - 1 ? "primary" : "";
    const button = h("button", { type: "button", class: `btn ${kind}`.trim(), text: label });
    button.addEventListener("click", () => dialog.close(`choice:${value}`));
    return button;
  });
  body.append(h("p", {}, text), h("div", { class: "dialog-actions" }, ...buttons));
  const result = showModal(dialog);
  buttons[0].focus();
  const answer = await result;
  dialog.remove();
  return answer.startsWith("choice:") ? answer.slice("choice:".length) : null;
}

/**
 * @param {string | (string | Node)[]} text text, or nodes (a name drawn with nameNode)
 * @param {{title?: string, value?: string, label?: string, confirmLabel?: string}} [options]
 */
export async function promptDialog(text, { title, value = "", label = "Name", confirmLabel = "Save" } = {}) {
  const { dialog, body } = createDialog({ title, className: "small-dialog" });
  const input = h("input", { type: "text", class: "input", "aria-label": label, value });
  input.value = value;
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  const ok = h("button", { type: "submit", class: "btn primary", text: confirmLabel });
  const form = h(
    "form",
    { method: "dialog" },
    text ? h("p", {}, text) : null,
    h("label", { class: "field" }, h("span", { text: label }), input),
    h("div", { class: "dialog-actions" }, cancel, ok),
  );
  body.append(form);
  cancel.addEventListener("click", () => dialog.close("cancel"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    dialog.close("ok");
  });
  const result = showModal(dialog);
  input.focus();
  input.select();
  const answer = await result;
  dialog.remove();
  return answer === "ok" ? input.value : null;
}
