// @ts-check
// Settings → Attachments: the limits a user may change (limits.js LIMIT_SETTINGS; the settings are
// owned by py_agent/app/attachments.py), and what can be attached. They apply to the message box's
// attachments and to the Files panel's uploads alike.

import { h } from "../ui/dom.js";
import { registerSettingsTab } from "../ui/extensions.js";
import { py } from "../ui/bridge.js";
import { LIMITS, LIMIT_SETTINGS, currentLimits, settingValue } from "./limits.js";

function limitField(setting, init, note) {
  const id = setting.key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const input = h("input", {
    class: "input",
    id,
    type: "number",
    min: String(setting.min),
    max: String(setting.max),
    step: "1",
    inputmode: "numeric",
    "aria-describedby": `${id}-range`,
  });
  input.value = String(currentLimits()[setting.limit]);
  input.addEventListener("change", async () => {
    const value = settingValue(setting, input.value);
    input.value = String(value);
    try {
      const r = await py("set_setting", { key: setting.key, value });
      init.settings = r.settings;
      note.textContent = "Saved.";
    } catch (error) {
      note.textContent = error.message;
    }
  });
  const range = `${setting.min} to ${setting.max}; default ${LIMITS[setting.limit]}`;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id, text: setting.label }),
    input,
    h("span", { class: "muted small", id: `${id}-range`, text: range }),
  );
}

function renderAttachments(panel, { app }) {
  const note = h("span", { class: "muted small", role: "status", id: "attachment-max-note" });
  panel.replaceChildren(
    ...LIMIT_SETTINGS.map((setting) => limitField(setting, app.init, note)),
    h("p", {
      class: "muted small",
      text: `Up to ${LIMITS.maxFiles} files per message: images (PNG, JPEG, GIF, WebP, BMP), PDF, DOCX, XLSX, CSV and text or code. Images are scaled to at most ${LIMITS.maxSide} px a side; a document's text is read in this browser and the file itself goes to the session's Files, under uploads/. A file over a limit is refused before it is read (uploads to Files too); a PDF past its page limit is read up to it, and says so.`,
    }),
    note,
  );
}

registerSettingsTab("attachments", "Attachments", renderAttachments);
