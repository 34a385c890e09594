// @ts-check
// The message box: Enter sends; while a reply streams Enter queues the text as steering and
// Alt+Enter as a follow-up (shown as queued until delivered); Escape or Stop aborts; Shift+Enter
// is a newline, and Enter that confirms an IME composition never sends.
// Attachments (web/attachments/): the Attach button (file picker), pasted images, very long pasted
// text (offered as a text file) and files dropped on the chat become chips above the text; each is
// prepared in a worker, shows its error on the chip, and can be removed until the message is sent.
// Nothing is dropped silently: a model that can't see images is named in a notice before sending,
// and the send then needs a confirmation.

import { h, iconButton, formatCount, formatTokens, nameNode, nameText, visibleName, withNames } from "./dom.js";
import { confirmDialog } from "./dialogs.js";
import { py, pythonReady } from "./bridge.js";
import { ACCEPT, LIMITS, PendingAttachment, formatSize, pastedTextFile } from "../attachments/attachments.js";

const PAPERCLIP =
  '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M20 11.5l-8.2 8.2a5 5 0 0 1-7.1-7.1l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4l7.8-7.8"/></svg>';

const MAX_HEIGHT = 240;
// pi's estimate (pi-agent-core's estimateTokens): a token is about 4 characters; an image counts 4,800.
const tokensOf = (chars) => Math.ceil(chars / 4);
const IMAGE_CHARS = 4800;
// The meter turns to the warning colour from this share of the compaction threshold.
const NEAR_THRESHOLD = 0.85;
// Below this share of the window by the meter's figure, a send does not ask Python for its estimate.
const CHECK_BELOW = 0.5;

// The tokens an attachment adds to the message (py_agent/app/attachments.py build_user_message:
// a `<file name="uploads/NAME">` block with a document's text inside it, and an image's block).
export function attachmentTokens(item) {
  const payload = item.payload;
  if (!payload) return 0;
  const wrapper = `<file name="uploads/${item.name}">\n\n</file>`.length;
  if (payload.kind === "image") return tokensOf(wrapper + IMAGE_CHARS);
  return tokensOf(wrapper + (payload.text?.length ?? 0));
}

export class Composer {
  constructor({
    form,
    input,
    sendButton,
    stopButton,
    queueList,
    hint,
    onSubmit,
    onAbort,
    onUnqueue,
    onSendAttachments,
  }) {
    this.form = form;
    this.input = input;
    this.sendButton = sendButton;
    this.stopButton = stopButton;
    this.queueList = queueList;
    this.hint = hint;
    this.onSubmit = onSubmit;
    this.onAbort = onAbort;
    this.onUnqueue = onUnqueue;
    this.onSendAttachments = onSendAttachments;
    this.streaming = false;
    this.readOnly = false;
    this.busy = false;
    this.model = null;
    this.attachments = [];
    this.context = null;
    this.buildAttachments();
    this.buildMeter();

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

  async submit(mode, { confirmImages = false } = {}) {
    if (this.attachments.length) return this.submitWithAttachments(confirmImages);
    const text = this.input.value;
    if (!text.trim() || this.busy || this.readOnly) return;
    this.busy = true;
    performance.mark("send:submit"); // bench/first_token.py: the steps from Enter to the request
    try {
      if (!this.streaming && !(await this.fitsContext(text))) return;
      performance.mark("send:checked");
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

  // More tokens than the model's context window (pi's estimate, characters / 4): ask first, since
  // the provider will most likely refuse it (py_agent/app/controller.py check_send).
  async fitsContext(text) {
    // Before Python is ready the message is queued (web/app.js); it is not held for the estimate.
    if (!pythonReady()) return true;
    // Far below the window by the meter's own figure: no round trip to Python before the request
    // (bench/first_token.py). Near it, Python's estimate of the whole context decides.
    const window = this.context?.contextWindow ?? 0;
    if (window && this.nextRequestTokens() < window * CHECK_BELOW) return true;
    let check;
    try {
      check = await py("check_send", { text });
    } catch {
      return true; // no estimate: let the provider decide
    }
    if (!check.over) return true;
    return confirmDialog(
      `With this message the conversation is about ${formatTokens(check.tokens)} tokens, more than this model's context window (${formatTokens(check.contextWindow)} tokens). The provider will probably refuse it, or cost a lot. Shorten the message, start a new chat or choose a model with a larger window. Send anyway?`,
      { title: "Longer than the model's context window", confirmLabel: "Send anyway" },
    );
  }

  // ---- the context meter ----

  // How much of the model's window the next request will use: the session's figure
  // (py_agent/app/context_meter.py: the last reply's usage and an estimate of what followed it)
  // plus an estimate of what is typed and attached.
  buildMeter() {
    this.meterFill = h("span", { class: "meter-fill" });
    this.meterText = h("span", { class: "meter-text" });
    this.meter = h(
      "span",
      { id: "context-meter", class: "context-meter", role: "meter", "aria-valuemin": "0", hidden: true },
      h("span", { class: "meter-bar", "aria-hidden": "true" }, this.meterFill),
      this.meterText,
    );
    this.hint.before(this.meter);
  }

  nextRequestTokens() {
    const typed = tokensOf(this.input.value.length);
    const attached = this.attachments.reduce((n, a) => n + (a.status === "error" ? 0 : attachmentTokens(a)), 0);
    return (this.context?.tokens ?? 0) + typed + attached;
  }

  updateMeter() {
    const context = this.context;
    const window = context?.contextWindow ?? 0;
    this.meter.hidden = !window;
    if (!window) return;
    const tokens = this.nextRequestTokens();
    const threshold = context.threshold ?? window;
    const level = tokens >= threshold ? "over" : tokens >= threshold * NEAR_THRESHOLD ? "near" : "ok";
    const percent = Math.round((tokens / window) * 100);
    const shown = `${formatTokens(tokens)} / ${formatTokens(window)}`;
    this.meterText.textContent = shown;
    this.meterFill.style.width = `${Math.min(percent, 100)}%`;
    this.meter.dataset.level = level;
    this.meter.dataset.tokens = String(tokens);
    this.meter.setAttribute("aria-valuemax", String(window));
    this.meter.setAttribute("aria-valuenow", String(Math.min(tokens, window)));
    this.meter.setAttribute("aria-label", `Context ${shown} tokens`);
    const note =
      level === "over"
        ? "; past the point where pi compacts the conversation"
        : level === "near"
          ? "; close to the point where pi compacts the conversation"
          : "";
    const text = `The next request uses about ${formatCount(tokens)} of the model's ${formatCount(window)} tokens (${percent}%)${note}`;
    this.meter.setAttribute("aria-valuetext", text);
    this.meter.title = text;
  }

  // ---- attachments ----

  buildAttachments() {
    this.fileInput = h("input", {
      type: "file",
      multiple: true,
      hidden: true,
      accept: ACCEPT,
      id: "attach-input",
      tabindex: "-1",
      "aria-hidden": "true",
    });
    this.attachButton = h("button", {
      type: "button",
      id: "attach-button",
      class: "attach-button",
      "aria-label": "Attach files",
      title: "Attach images, PDF, DOCX, XLSX, CSV or text (or paste, or drop them on the chat)",
    });
    this.attachButton.innerHTML = PAPERCLIP; // a fixed icon, no data in it
    this.attachButton.append(h("span", { class: "attach-label", text: "Attach" }));
    this.chipList = h("ul", { id: "attachments", class: "attachments", "aria-label": "Attachments", hidden: true });
    this.notice = h("div", { id: "attach-notice", class: "attach-notice", role: "status", hidden: true });
    const box = this.form.querySelector(".composer-box") ?? this.form;
    box.prepend(this.chipList, this.notice);
    const bar = this.form.querySelector(".composer-bar") ?? box;
    bar.prepend(this.attachButton);
    this.form.append(this.fileInput);
    this.attachButton.addEventListener("click", () => this.fileInput.click());
    this.fileInput.addEventListener("change", () => {
      this.addFiles([...this.fileInput.files]);
      this.fileInput.value = "";
    });
    this.input.addEventListener("paste", (event) => this.paste(event));
    const zone = this.form.closest("main") ?? this.form;
    let depth = 0;
    const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes("Files");
    zone.addEventListener("dragenter", (event) => {
      if (!hasFiles(event)) return;
      depth += 1;
      zone.classList.add("drop-active");
    });
    zone.addEventListener("dragleave", () => {
      depth = Math.max(0, depth - 1);
      if (!depth) zone.classList.remove("drop-active");
    });
    zone.addEventListener("dragover", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    });
    zone.addEventListener("drop", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth = 0;
      zone.classList.remove("drop-active");
      this.addFiles([...event.dataTransfer.files]);
    });
  }

  paste(event) {
    const data = event.clipboardData;
    if (!data) return;
    const files = [...(data.files ?? [])].filter((f) => f.type.startsWith("image/"));
    if (files.length) {
      event.preventDefault();
      this.addFiles(
        files.map((f, i) =>
          f.name && f.name !== "image.png"
            ? f
            : new File([f], `pasted-image-${Date.now()}${i ? `-${i}` : ""}.${f.type.split("/")[1] || "png"}`, {
                type: f.type,
              }),
        ),
      );
      return;
    }
    const text = data.getData("text/plain");
    if (text && text.length > LIMITS.longPaste) {
      // Pasted as usual; the notice offers to move it into an attachment instead.
      const turn = h("button", { type: "button", class: "btn small", text: "Attach it as a file" });
      turn.addEventListener("click", () => {
        if (this.input.value.includes(text)) this.input.value = this.input.value.replace(text, "");
        this.autosize();
        this.addFiles([pastedTextFile(text)]);
      });
      this.showNotice(`You pasted ${formatCount(text.length)} characters.`, "info", turn);
    }
  }

  addFiles(files) {
    if (!files.length) return;
    if (this.readOnly) return;
    const room = LIMITS.maxFiles - this.attachments.length;
    if (files.length > room) this.showNotice(`You can attach at most ${LIMITS.maxFiles} files to a message.`, "error");
    const added = [];
    for (const file of files.slice(0, Math.max(0, room))) {
      const item = new PendingAttachment(file);
      this.attachments.push(item);
      added.push(item);
      item.done.then(() => {
        this.applyName(item);
        this.renderAttachments();
      });
    }
    if (files.length <= room) this.clearNotice();
    this.renderAttachments();
    this.resolveNames(added);
  }

  // Where each file will be kept (py_agent/app/attachments.py upload_path): a name the workspace
  // cannot hold shows the safe name it gets beside its own, or its chip says why it is refused.
  async resolveNames(items) {
    if (!items.length) return;
    let answers;
    try {
      answers = await py("upload_names", { names: items.map((item) => item.name) });
    } catch {
      return; // the send checks again and says why
    }
    for (const [index, item] of items.entries()) {
      const answer = answers?.[index];
      if (!answer) continue;
      item.nameError = answer.error ?? null;
      item.storedAs = answer.path && answer.path !== `uploads/${item.name}` ? answer.path : null;
      this.applyName(item);
    }
    this.renderAttachments();
  }

  applyName(item) {
    if (!item.nameError || item.status === "working") return;
    item.status = "error";
    item.error = item.nameError;
  }

  removeAttachment(item) {
    item.dispose();
    this.attachments = this.attachments.filter((a) => a !== item);
    this.clearNotice();
    this.renderAttachments();
    this.focus();
  }

  clearAttachments() {
    for (const item of this.attachments) item.dispose();
    this.attachments = [];
    this.renderAttachments();
  }

  renderAttachments() {
    this.chipList.replaceChildren(
      ...this.attachments.map((item) => {
        const visual = item.thumbUrl
          ? h("img", { class: "att-thumb", src: item.thumbUrl, alt: "" })
          : h("span", {
              class: `att-icon ${item.kind ?? "unknown"}`,
              "aria-hidden": "true",
              text: (item.format ?? item.kind ?? "?").slice(0, 4).toUpperCase(),
            });
        const state =
          item.status === "working"
            ? h("span", { class: "att-state", text: "Reading…" })
            : item.status === "error"
              ? h("span", { class: "att-error", role: "alert" }, withNames(item.error, [item.name]))
              : h(
                  "span",
                  { class: "att-size" },
                  `${formatSize(item.size)} · about ${formatTokens(attachmentTokens(item))} tokens`,
                  ...(item.notice ? [h("span", { class: "att-note", text: ` · ${item.notice}` })] : []),
                );
        const saved =
          item.storedAs && item.status !== "error"
            ? h("span", { class: "att-saved" }, "saved as ", nameNode(item.storedAs))
            : null;
        const remove = iconButton("close", `Remove ${visibleName(item.name)}`, { class: "small att-remove" });
        remove.addEventListener("click", () => this.removeAttachment(item));
        return h(
          "li",
          {
            class: `att-chip ${item.status}`,
            "data-status": item.status,
            "data-name": item.name,
            title: nameText(item.name),
          },
          visual,
          h("span", { class: "att-meta" }, h("span", { class: "att-name" }, nameNode(item.name)), saved, state),
          remove,
        );
      }),
    );
    this.chipList.hidden = this.attachments.length === 0;
    this.updateVisionNotice();
    this.update();
  }

  updateVisionNotice() {
    const images = this.attachments.some((a) => a.isImage && a.status !== "error");
    // pi's estimate: a token is about 4 characters.
    const tokens = this.attachments.reduce((n, a) => n + (a.payload?.text?.length ?? 0), 0) / 4;
    const contextWindow = this.model?.contextWindow ?? 0;
    if (
      contextWindow &&
      tokens > contextWindow / 2 &&
      (!this.notice.dataset.kind || this.notice.dataset.kind === "context")
    ) {
      this.showNotice(
        `The attached text is about ${formatCount(tokens)} tokens, over half of ${this.model.name}'s context window.`,
        "warn",
        null,
        "context",
      );
      return;
    }
    if (this.notice.dataset.kind === "context" && !(contextWindow && tokens > contextWindow / 2)) this.clearNotice();
    if (images && this.model && !this.model.vision) {
      if (this.notice.dataset.kind !== "vision" && this.notice.dataset.kind !== "confirm")
        this.showNotice(
          `${this.model.name} can't see images; it will be told an image was omitted.`,
          "warn",
          null,
          "vision",
        );
    } else if (this.notice.dataset.kind === "vision" || this.notice.dataset.kind === "confirm") this.clearNotice();
  }

  showNotice(text, level = "info", action = null, kind = "") {
    this.notice.replaceChildren(h("span", { class: "attach-notice-text" }, text), ...(action ? [action] : []));
    this.notice.className = `attach-notice ${level}`;
    this.notice.dataset.kind = kind;
    this.notice.hidden = false;
  }

  clearNotice() {
    this.notice.hidden = true;
    this.notice.className = "attach-notice";
    this.notice.dataset.kind = "";
    this.notice.replaceChildren();
  }

  async submitWithAttachments(confirmImages) {
    if (this.busy || this.readOnly) return;
    if (this.streaming) {
      this.showNotice("Attachments go with a new message: wait until the reply has finished, or stop it.", "info");
      return;
    }
    this.busy = true;
    try {
      if (this.attachments.some((a) => a.status === "working")) {
        this.showNotice("Reading the attachments…", "info");
        await Promise.all(this.attachments.map((a) => a.done));
        this.clearNotice();
      }
      const failed = this.attachments.filter((a) => a.status === "error");
      if (failed.length) {
        this.showNotice("Remove the attachments that show an error before sending; the others stay.", "error");
        return;
      }
      const items = [...this.attachments];
      const text = this.input.value;
      const result = await this.onSendAttachments(
        text.trim(),
        items.map((a) => a.toPayload()),
        confirmImages,
      );
      if (result?.status === "sent") {
        if (this.input.value === text) this.input.value = "";
        for (const item of items) item.dispose();
        this.attachments = this.attachments.filter((a) => !items.includes(a));
        this.clearNotice();
        this.renderAttachments();
        this.autosize();
      } else if (result?.status === "confirm_images") {
        const anyway = h("button", {
          type: "button",
          class: "btn small",
          id: "attach-send-anyway",
          text: "Send anyway",
        });
        anyway.addEventListener("click", () => this.submit("steer", { confirmImages: true }));
        this.showNotice(result.message, "warn", anyway, "confirm");
      } else if (result?.status === "refused") {
        const item = this.attachments.find((a) => a.name === result.name);
        if (item) {
          item.status = "error";
          item.error = result.message;
          this.renderAttachments();
        }
        this.showNotice(withNames(result.message, [result.name]), "error");
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

  setState({ streaming, readOnly, queue, model, compacting, context }) {
    this.context = context ?? null;
    this.streaming = Boolean(streaming);
    this.compacting = Boolean(compacting);
    this.readOnly = Boolean(readOnly);
    if (model && model !== this.model) {
      this.model = model;
      this.updateVisionNotice();
    }
    this.renderQueue(queue ?? []);
    this.update();
  }

  update() {
    const streaming = this.streaming;
    this.stopButton.hidden = !streaming;
    const content = Boolean(this.input.value.trim() || this.attachments?.length);
    this.sendButton.hidden = streaming && !content;
    this.sendButton.disabled = !content || this.readOnly;
    if (this.attachButton) this.attachButton.disabled = this.readOnly;
    this.sendButton.setAttribute("aria-label", streaming ? "Queue as steering message" : "Send message");
    this.sendButton.title = streaming ? "Queue (Enter: steer · Alt+Enter: follow-up)" : "Send (Enter)";
    this.input.disabled = this.readOnly;
    this.input.placeholder = this.readOnly
      ? "Read-only in this tab"
      : streaming
        ? "Steer the reply… (Enter: after this step · Alt+Enter: when done)"
        : "Message…";
    this.hint.textContent = this.compacting
      ? "Summarizing the earlier messages · Esc stops"
      : streaming
        ? "Enter steers · Alt+Enter follows up · Esc stops"
        : "Enter sends · Shift+Enter new line";
    this.updateMeter();
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
