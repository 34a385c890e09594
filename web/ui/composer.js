// The message box: Enter sends; while a reply streams Enter queues the text as steering and
// Alt+Enter as a follow-up (shown as queued until delivered); Escape or Stop aborts; Shift+Enter
// is a newline, and Enter that confirms an IME composition never sends.

import { h, icon, iconButton } from "./dom.js";

const MAX_HEIGHT = 240;

export class Composer {
  constructor({ form, input, sendButton, stopButton, queueList, hint, onSubmit, onAbort, onUnqueue }) {
    this.form = form;
    this.input = input;
    this.sendButton = sendButton;
    this.stopButton = stopButton;
    this.queueList = queueList;
    this.hint = hint;
    this.onSubmit = onSubmit;
    this.onAbort = onAbort;
    this.onUnqueue = onUnqueue;
    this.streaming = false;
    this.readOnly = false;
    this.busy = false;

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit("steer");
    });
    input.addEventListener("keydown", (event) => this.keydown(event));
    input.addEventListener("input", () => this.autosize());
    stopButton.addEventListener("click", () => this.onAbort());
    this.update();
  }

  keydown(event) {
    if (event.key !== "Enter" || event.isComposing || event.keyCode === 229) return;
    if (event.shiftKey) return; // newline
    event.preventDefault();
    this.submit(event.altKey ? "follow_up" : "steer");
  }

  async submit(mode) {
    const text = this.input.value;
    if (!text.trim() || this.busy || this.readOnly) return;
    this.busy = true;
    try {
      const accepted = await this.onSubmit(text, mode, this.streaming);
      if (accepted) {
        // Only what was sent is removed: text typed meanwhile stays.
        if (this.input.value === text) this.input.value = "";
        else if (this.input.value.startsWith(text)) this.input.value = this.input.value.slice(text.length).trimStart();
        this.autosize();
      }
    } finally {
      this.busy = false;
      this.update();
    }
  }

  restore(texts) {
    const joined = texts.join("\n\n");
    this.input.value = this.input.value ? `${joined}\n\n${this.input.value}` : joined;
    this.autosize();
  }

  autosize() {
    const el = this.input;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, MAX_HEIGHT)}px`;
    el.style.overflowY = el.scrollHeight > MAX_HEIGHT ? "auto" : "hidden";
    this.update();
  }

  setState({ streaming, readOnly, queue }) {
    this.streaming = Boolean(streaming);
    this.readOnly = Boolean(readOnly);
    this.renderQueue(queue ?? []);
    this.update();
  }

  update() {
    const streaming = this.streaming;
    this.stopButton.hidden = !streaming;
    this.sendButton.hidden = streaming && !this.input.value.trim();
    this.sendButton.disabled = !this.input.value.trim() || this.readOnly;
    this.sendButton.setAttribute("aria-label", streaming ? "Queue as steering message" : "Send message");
    this.sendButton.title = streaming ? "Queue (Enter: steer · Alt+Enter: follow-up)" : "Send (Enter)";
    this.input.disabled = this.readOnly;
    this.input.placeholder = this.readOnly
      ? "Read-only in this tab"
      : streaming
        ? "Steer the reply… (Enter: after this step · Alt+Enter: when done)"
        : "Message…";
    this.hint.textContent = streaming
      ? "Enter steers · Alt+Enter follows up · Esc stops"
      : "Enter sends · Shift+Enter new line";
  }

  renderQueue(queue) {
    this.queueList.replaceChildren(
      ...queue.map((q) => {
        const remove = iconButton("close", `Take back queued message: ${q.text.slice(0, 40)}`, { class: "small" });
        remove.addEventListener("click", () => this.onUnqueue(q.id));
        return h(
          "li",
          { class: `queued ${q.mode}` },
          h("span", { class: "queued-mode", text: q.label ?? (q.mode === "steer" ? "Steering" : "Follow-up") }),
          h("span", { class: "queued-text", text: q.text }),
          h("span", { class: "queued-state", text: "queued" }),
          remove,
        );
      }),
    );
    this.queueList.hidden = queue.length === 0;
  }

  focus() {
    if (!this.input.disabled) this.input.focus();
  }
}
