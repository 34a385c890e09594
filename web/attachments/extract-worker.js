// @ts-check
// Text extraction of attached documents, in a dedicated module worker so that the page stays
// responsive: PDF (pdf.js), DOCX (mammoth), XLSX (read-excel-file), CSV and text (TextDecoder).
// The libraries are vendored at build time (static/vendor/, see buildsys/config.py) and loaded on
// first use. pdf.js runs inside this worker (its worker module is imported here, so it starts no
// nested worker and evaluates no code from strings).
//
// Nothing here reads more than the limits allow (web/attachments/limits.js): a DOCX or XLSX is
// unpacked by zip.js within them before its library sees it (as a stored ZIP), a PDF is read up to
// its page and text limits, a text file only as far as the message takes it.
//
// Message in: ExtractJob; out: JobReply<ExtractDone> (web/messages.d.ts): the text, whether it was
// cut, the original's bytes, and `release` (the file was large, or failed: the page ends this
// worker to free what the libraries held).

import { base64Ascii, decodeText } from "./codec.js";
import { pageText } from "./pdf-text.js";
import { ZipRefusal, unpackZip } from "./zip.js";

/** @typedef {import("../messages").ExtractJob} ExtractJob */
/** @typedef {import("../messages").ExtractDone} ExtractDone */

const scope =
  /** @type {import("../messages").WorkerScope<ExtractJob, import("../messages").JobReply<ExtractDone>>} */ (
    /** @type {unknown} */ (self)
  );

/** @type {{pdf?: Promise<typeof import("../vendor/pdf.min.js")>, mammoth?: Promise<Window["mammoth"]>, xlsx?: Promise<Window["readXlsxFile"]>}} */
const libs = {};

async function pdfjs() {
  if (!libs.pdf) {
    libs.pdf = (async () => {
      // The fake-worker mode of pdf.js: its worker code runs in this (already off-main-thread) worker.
      globalThis.pdfjsWorker = await import("../vendor/pdf.worker.min.js");
      return import("../vendor/pdf.min.js");
    })();
  }
  return libs.pdf;
}

async function mammoth() {
  // A UMD bundle: as a module it sets `self.mammoth`.
  if (!libs.mammoth) libs.mammoth = import("../vendor/mammoth.browser.min.js").then(() => self.mammoth);
  return libs.mammoth;
}

async function readXlsx() {
  if (!libs.xlsx) libs.xlsx = import("../vendor/read-excel-file.min.js").then(() => self.readXlsxFile);
  return libs.xlsx;
}

function xmlAttr(value) {
  return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
}

function csvCell(value) {
  if (value === null || value === undefined) return "";
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (/[",\n\r]/.test(text)) text = `"${text.replace(/"/g, '""')}"`;
  return text;
}

class Failure extends Error {}

function reason(error) {
  return String(error?.message || error).replace(/[.\s]+$/, "");
}

// A library's own exception (a TypeError deep inside it) says nothing to the user: the file
// didn't have the shape the library expects.
function libraryReason(error, what) {
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError)
    return `the file is damaged or isn't ${what}`;
  return reason(error);
}

async function unpacked(file, name, limits) {
  try {
    return await unpackZip(file, name, limits);
  } catch (error) {
    if (error instanceof ZipRefusal) throw new Failure(error.message);
    throw error;
  }
}

async function extractPdf(bytes, name, { maxPages, maxTextChars }) {
  const pdf = await pdfjs();
  let doc;
  // verbosity 0: errors only (not the "fake worker" notice: running in this worker is the point).
  const task = pdf.getDocument({ data: bytes, isEvalSupported: false, stopAtErrors: false, verbosity: 0 });
  try {
    doc = await task.promise;
  } catch (error) {
    if (error?.name === "PasswordException") throw new Failure(`${name} is password-protected.`);
    throw new Failure(`${name} couldn't be read as PDF: ${reason(error)}.`);
  }
  const pages = [];
  let chars = 0;
  let count = Math.min(doc.numPages, maxPages);
  for (let n = 1; n <= count; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    const text = pageText(content.items);
    chars += text.length;
    pages.push(`<page number="${n}">\n${text}\n</page>`);
    page.cleanup();
    if (chars >= maxTextChars) count = n; // the text limit: no further page is read
  }
  const numPages = doc.numPages;
  await task.destroy();
  if (chars === 0) throw new Failure(`${name} has no text layer (scanned?).`);
  if (numPages <= count) return { text: pages.join("\n"), pages: numPages };
  const limit =
    count === maxPages
      ? `the limit is ${maxPages} pages`
      : `the limit is ${maxTextChars.toLocaleString("en")} characters of text`;
  const kept = `first ${count.toLocaleString("en")} of ${numPages.toLocaleString("en")} pages read`;
  return {
    text: `${pages.join("\n")}\n(only the first ${count} of ${numPages} pages were read: ${limit})`,
    pages: numPages,
    notice: `${kept} (${limit})`,
  };
}

async function extractDocx(file, name, limits) {
  const stored = await unpacked(file, name, limits);
  const lib = await mammoth();
  try {
    const result = await lib.extractRawText({ arrayBuffer: await stored.arrayBuffer() });
    return { text: result.value.replace(/\n{3,}/g, "\n\n").trim(), unpacked: stored.size };
  } catch (error) {
    throw new Failure(`${name} couldn't be read as Word: ${libraryReason(error, "a Word document")}.`);
  }
}

async function extractXlsx(file, name, limits) {
  const stored = await unpacked(file, name, limits);
  const read = await readXlsx();
  let sheets;
  try {
    sheets = await read(stored);
  } catch (error) {
    throw new Failure(`${name} couldn't be read as Excel: ${libraryReason(error, "an Excel workbook")}.`);
  }
  const parts = sheets.map(({ sheet, data }) => {
    const rows = (data ?? []).map((row) => row.map(csvCell).join(",")).join("\n");
    return `<sheet name="${xmlAttr(sheet)}">\n${rows}\n</sheet>`;
  });
  return { text: parts.join("\n"), unpacked: stored.size };
}

// A text file: only its start is decoded (at most 4 bytes a character), never the whole file;
// the file itself, in uploads/, is its full text.
async function extractText(file, maxChars) {
  const head = new Uint8Array(await file.slice(0, maxChars * 4).arrayBuffer());
  const text = decodeText(head, head.length < file.size);
  const truncated = text.length > maxChars || head.length < file.size;
  return { text: text.slice(0, maxChars), truncated, textIsFile: truncated };
}

/**
 * @param {ExtractJob} job
 * @returns {Promise<ExtractDone>}
 */
async function extract({ kind, file, name, limits }) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let result;
  if (kind === "pdf") result = await extractPdf(bytes.slice(), name, limits);
  else if (kind === "docx") result = await extractDocx(file, name, limits);
  else if (kind === "xlsx") result = await extractXlsx(file, name, limits);
  else {
    const release = file.size > limits.releaseMb * 1024 * 1024;
    return { ...(await extractText(file, limits.maxChars)), release, bytes: base64Ascii(bytes) };
  }
  // Text past the text limit is left out (a spreadsheet or document can hold far more than a message).
  const cut = result.text.length > limits.maxTextChars;
  const full = cut ? result.text.slice(0, limits.maxTextChars) : result.text;
  const truncated = full.length > limits.maxChars;
  return {
    text: truncated ? full.slice(0, limits.maxChars) : full,
    truncated,
    fullText: truncated ? full : undefined,
    pages: result.pages,
    release: Math.max(file.size, result.unpacked ?? 0) > limits.releaseMb * 1024 * 1024,
    notice:
      result.notice ??
      (cut
        ? `first ${limits.maxTextChars.toLocaleString("en")} characters read (the limit of text per file)`
        : undefined),
    bytes: base64Ascii(bytes),
  };
}

scope.addEventListener("message", async (event) => {
  const job = event.data;
  try {
    const result = await extract(job);
    scope.postMessage({ id: job.id, ok: true, ...result }, [result.bytes.buffer]);
  } catch (error) {
    const message = error instanceof Failure ? error.message : `${job.name} couldn't be read: ${reason(error)}.`;
    // Whatever a failed library held (a half-read document) goes with the worker.
    scope.postMessage({ id: job.id, ok: false, error: message, release: true });
  }
});
