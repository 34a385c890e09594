// Settings → Attachments: the per-file size limit of the message box's attachments (setting
// "attachmentMaxMb", owned by py_agent/app/attachments.py), and what can be attached.

import { h } from "../ui/dom.js";
import { registerSettingsTab } from "../ui/extensions.js";
import { py } from "../ui/bridge.js";
import { LIMITS } from "./attachments.js";

function renderAttachments(panel, { app }) {
  const init = app.init;
  const input = h("input", {
    class: "input",
    id: "attachment-max-mb",
    type: "number",
    min: "1",
    max: String(LIMITS.maxFileMb),
    step: "1",
    inputmode: "numeric",
  });
  const current = init.settings.attachmentMaxMb;
  input.value = String(typeof current === "number" ? current : LIMITS.maxFileMb);
  const note = h("span", { class: "muted small", role: "status", id: "attachment-max-note" });
  input.addEventListener("change", async () => {
    const value = Math.min(LIMITS.maxFileMb, Math.max(1, Math.round(Number(input.value) || LIMITS.maxFileMb)));
    input.value = String(value);
    try {
      const r = await py("set_setting", { key: "attachmentMaxMb", value });
      init.settings = r.settings;
      note.textContent = "Saved.";
    } catch (error) {
      note.textContent = error.message;
    }
  });
  panel.replaceChildren(
    h(
      "div",
      { class: "field" },
      h("label", { for: "attachment-max-mb", text: "Largest file you can attach (MB)" }),
      input,
      h("p", {
        class: "muted small",
        text: `Up to ${LIMITS.maxFiles} files per message: images (PNG, JPEG, GIF, WebP, BMP), PDF, DOCX, XLSX, CSV and text or code. Images are scaled to at most ${LIMITS.maxSide} px a side; a document's text is read in this browser and the file itself goes to the session's Files, under uploads/.`,
      }),
      note,
    ),
  );
}

registerSettingsTab("attachments", "Attachments", renderAttachments);
