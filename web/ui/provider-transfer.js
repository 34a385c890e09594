// @ts-check
// Settings → Custom providers: export the providers (and their models' descriptions) to a JSON file
// and import one back. The checks and the merge are py_agent/app/provider_transfer.py's.

import { h, icon, download } from "./dom.js";
import { createDialog, showModal } from "./dialogs.js";
import { py } from "./bridge.js";

// Same names as saved providers: replace them, keep the saved ones, or import nothing.
/**
 * @param {string[]} names the file's providers already saved
 * @param {number} count how many providers the file has
 * @returns {Promise<string>} "replace", "keep", or another value (cancel, Escape): import nothing
 */
async function askAboutClashes(names, count) {
  const { dialog, body } = createDialog({ title: "Providers already saved", className: "small-dialog" });
  const list = names.join(", ");
  const buttons = [
    ["cancel", "Cancel", "btn ghost"],
    ["keep", "Keep mine", "btn"],
    ["replace", "Replace", "btn primary"],
  ].map(([value, text, cls]) => {
    const button = h("button", { type: "button", class: cls, text });
    button.addEventListener("click", () => dialog.close(value));
    return button;
  });
  body.append(
    h("p", {
      text: `The file has ${count} provider${count === 1 ? "" : "s"}; ${list} ${names.length === 1 ? "is" : "are"} saved here already. Replace ${names.length === 1 ? "it" : "them"} with the file's, or keep yours and add only the others?`,
    }),
    h("div", { class: "dialog-actions" }, ...buttons),
  );
  const answer = showModal(dialog);
  buttons[1].focus();
  const value = await answer;
  dialog.remove();
  return value;
}

/**
 * @param {{ count: number, rerender: () => Promise<unknown> | unknown }} options how many custom providers are
 *   saved, and how to draw the list again after an import
 */
export function providerTransfer({ count, rerender }) {
  const status = h("p", { class: "muted small", role: "status", id: "provider-transfer-status" });
  const withKeys = h("input", { type: "checkbox", id: "export-with-keys" });
  const exportButton = h(
    "button",
    { type: "button", class: "btn", id: "export-providers", disabled: !count },
    icon("download"),
    "Export providers",
  );
  exportButton.addEventListener("click", async () => {
    const { json } = await py("export_custom_providers", { include_keys: withKeys.checked });
    download("py-agent-providers.json", json, "application/json");
    status.textContent = withKeys.checked
      ? "Exported with their API keys: keep the file private."
      : "Exported without API keys.";
  });
  const file = h("input", {
    type: "file",
    id: "import-providers-file",
    accept: ".json,application/json",
    hidden: true,
  });
  const importButton = h(
    "button",
    { type: "button", class: "btn", id: "import-providers" },
    icon("upload"),
    "Import providers",
  );
  importButton.addEventListener("click", () => file.click());
  file.addEventListener("change", async () => {
    const chosen = file.files?.[0];
    file.value = "";
    if (!chosen) return;
    let result;
    try {
      const text = await chosen.text();
      result = await py("import_custom_providers", { text });
      if (result.conflicts) {
        const answer = await askAboutClashes(result.conflicts, result.count);
        if (answer !== "replace" && answer !== "keep") {
          status.textContent = "Nothing was imported.";
          return;
        }
        result = await py("import_custom_providers", { text, replace: answer === "replace" });
      }
    } catch (error) {
      status.textContent = `Nothing was imported: ${error.message}`;
      return;
    }
    if (!result.ok) {
      status.textContent = result.problem;
      return;
    }
    await rerender();
    // The list was drawn again: its status line is a new one.
    const shown = document.getElementById("provider-transfer-status");
    if (shown) shown.textContent = result.summary;
  });
  return h(
    "div",
    { class: "provider-transfer" },
    h("div", { class: "row-actions" }, exportButton, importButton, file),
    h(
      "label",
      { class: "check" },
      withKeys,
      h("span", { text: "Include API keys and custom headers (not exported unless ticked)" }),
    ),
    status,
  );
}
