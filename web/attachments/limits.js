// @ts-check
// Every limit on what the page reads from a user's file, in one place: the message box's
// attachments (attachments.js and its workers) and the Files panel's uploads (web/files/preview.js)
// check files against the same numbers. Python mirrors the ones it checks again
// (py_agent/app/attachments.py LIMIT_SETTINGS; tests/app/test_attachment_limits.py compares them).
// A limit is checked before the work that could exceed it (a header, a ZIP's central directory),
// never after: a renderer that runs out of memory cannot be saved (docs/attachments.md).

export const LIMITS = {
  maxFiles: 10,
  maxFileMb: 20, // per file (Settings → Attachments: "attachmentMaxMb")
  // A ZIP-based document (DOCX, XLSX) unpacked, all parts together ("attachmentMaxUnpackedMb"). Its
  // library holds about 25 times that at its peak (mammoth, docs/attachments.md): 20 MB costs the
  // worker some 500 MB, the highest setting over 1 GB.
  maxUnpackedMb: 20,
  maxZipEntries: 10_000, // parts of a ZIP-based document
  maxZipRatio: 200, // unpacked / packed size of one part over 1 MB (zeros pack about 1000 to 1)
  maxMegapixels: 50, // an image's width × height, read from its header ("attachmentMaxMegapixels")
  maxPages: 500, // PDF pages read ("attachmentMaxPages")
  maxTextChars: 5_000_000, // text read from one document; what follows is left out, with a note
  maxChars: 100_000, // document text inlined in the message (the rest goes to uploads/<name>.txt)
  timeoutMs: 60_000, // give up on one file
  releaseMb: 5, // after a file (or unpacked document) this large the worker is ended: its memory goes
  maxSide: 2000,
  maxBase64: Math.floor(4.5 * 1024 * 1024),
  longPaste: 20_000, // pasted text longer than this is offered as a text attachment
};

/** The limits a user can change in Settings → Attachments: setting key, limit, label, lowest, highest. */
export const LIMIT_SETTINGS = [
  { key: "attachmentMaxMb", limit: "maxFileMb", label: "Largest file (MB)", min: 1, max: 20 },
  {
    key: "attachmentMaxUnpackedMb",
    limit: "maxUnpackedMb",
    label: "Largest unpacked DOCX or XLSX (MB)",
    min: 1,
    max: 50,
  },
  { key: "attachmentMaxMegapixels", limit: "maxMegapixels", label: "Largest image (megapixels)", min: 1, max: 200 },
  { key: "attachmentMaxPages", limit: "maxPages", label: "PDF pages read", min: 1, max: 2000 },
];

/** A setting's value as a limit: a whole number within the setting's range, else the default. */
export function settingValue(setting, value) {
  const number = Math.round(Number(value));
  if (!Number.isFinite(number) || number <= 0) return LIMITS[setting.limit];
  return Math.min(setting.max, Math.max(setting.min, number));
}

let readSettings = () => ({});

/** Where the app's settings are read from (web/app.js gives it the app's own, kept current by Settings). */
export function useSettings(read) {
  readSettings = read;
}

/** The limits in force: the defaults with the user's settings. */
export function currentLimits() {
  const settings = readSettings() ?? {};
  const limits = { ...LIMITS };
  for (const setting of LIMIT_SETTINGS)
    if (settings[setting.key] !== undefined) limits[setting.limit] = settingValue(setting, settings[setting.key]);
  return limits;
}

export function mb(bytes) {
  return (bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "");
}
