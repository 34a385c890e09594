// @ts-check
// The API-key dialog: asked at the first send to a provider without a key (and when a provider
// rejects its key). The key goes to Python once; the page never reads it back.

import { h, icon } from "./dom.js";
import { createDialog, showModal } from "./dialogs.js";
import { py } from "./bridge.js";

export async function askForKey(request, { reason = "", test = true, confirmLabel = "Save and send" } = {}) {
  const label = request.label || request.provider;
  const { dialog, body } = createDialog({ title: `API key for ${label}`, className: "key-dialog" });
  const input = h("input", {
    type: "password",
    class: "input mono",
    id: "api-key-input",
    autocomplete: "off",
    spellcheck: "false",
    autocapitalize: "off",
    placeholder: request.keyHint || "Paste your key",
    "aria-describedby": "api-key-help",
  });
  const reveal = h("button", {
    type: "button",
    class: "btn ghost small",
    "aria-pressed": "false",
    "aria-label": "Show the key",
    text: "Show",
  });
  reveal.addEventListener("click", () => {
    const shown = input.type === "text";
    input.type = shown ? "password" : "text";
    reveal.textContent = shown ? "Show" : "Hide";
    reveal.setAttribute("aria-pressed", String(!shown));
    reveal.setAttribute("aria-label", shown ? "Show the key" : "Hide the key");
  });
  const where = request.custom ? request.baseUrl || "its server" : label;
  const remember = h("input", {
    type: "radio",
    name: "key-place",
    value: "device",
    checked: true,
    id: "key-place-device",
  });
  const tabOnly = h("input", { type: "radio", name: "key-place", value: "tab", id: "key-place-tab" });
  const testBox = h("input", { type: "checkbox", id: "key-test", checked: test });
  testBox.checked = test;
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  const save = h("button", { type: "submit", class: "btn primary", id: "key-save", text: confirmLabel });
  const form = h(
    "form",
    { class: "stack", novalidate: true },
    reason ? h("p", { class: "form-error", role: "alert", text: reason }) : null,
    h(
      "p",
      { id: "api-key-help", class: "muted" },
      `Your messages to ${label} are sent straight from this page to ${where}, with this key. `,
      "The key stays in this browser: it is never put in a URL, an export or a log.",
    ),
    request.keyUrl
      ? h(
          "p",
          {},
          h(
            "a",
            { href: request.keyUrl, target: "_blank", rel: "noopener noreferrer", class: "link" },
            `Get a key from ${label}`,
            icon("external", "icon inline"),
          ),
        )
      : null,
    h("label", { class: "field", for: "api-key-input" }, h("span", { text: "API key" })),
    h("div", { class: "input-row" }, input, reveal),
    h(
      "fieldset",
      { class: "choices" },
      h("legend", { text: "Keep the key" }),
      h(
        "label",
        { class: "choice" },
        remember,
        h(
          "span",
          {},
          h("strong", { text: "On this device" }),
          h("small", { text: "Until you delete it in Settings." }),
        ),
      ),
      h(
        "label",
        { class: "choice" },
        tabOnly,
        h(
          "span",
          {},
          h("strong", { text: "For this tab only" }),
          h("small", { text: "Forgotten when the tab is closed." }),
        ),
      ),
    ),
    h("label", { class: "check" }, testBox, h("span", { text: "Check the key first with a tiny request" })),
    error,
    h("div", { class: "dialog-actions" }, cancel, save),
  );
  body.append(form);
  cancel.addEventListener("click", () => dialog.close("cancel"));
  let saved = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      error.textContent = "Paste the key first.";
      error.hidden = false;
      input.focus();
      return;
    }
    save.disabled = true;
    save.textContent = testBox.checked ? "Checking…" : "Saving…";
    error.hidden = true;
    try {
      const result = await py("save_key", {
        provider: request.provider,
        key,
        remember: remember.checked,
        test: testBox.checked,
      });
      if (result.ok) {
        saved = true;
        input.value = "";
        dialog.close("ok");
        return;
      }
      error.textContent = `The key did not work: ${result.problem}`;
      error.hidden = false;
      input.focus();
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    } finally {
      save.disabled = false;
      save.textContent = confirmLabel;
    }
  });
  const closed = showModal(dialog);
  input.focus();
  await closed;
  input.value = "";
  dialog.remove();
  return saved;
}
