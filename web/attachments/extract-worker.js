// Text extraction of attached documents, in a dedicated module worker so that the page stays
// responsive: PDF (pdf.js), DOCX (mammoth), XLSX (read-excel-file), CSV and text (TextDecoder).
// The libraries are vendored at build time (static/vendor/, see buildsys/config.py) and loaded on
// first use. pdf.js runs inside this worker (its worker module is imported here, so it starts no
// nested worker and evaluates no code from strings).
//
// Message in:  { id, kind: "pdf" | "docx" | "xlsx" | "text", file: Blob, name, maxChars, maxPages }
// Message out: { id, ok: true, text, truncated, fullText?, pages?, bytes (base64 as ASCII bytes) }
//            | { id, ok: false, error }

import { base64Ascii, decodeText } from "./codec.js";
import { pageText } from "./pdf-text.js";

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

async function extractPdf(bytes, name, maxPages) {
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
  const count = Math.min(doc.numPages, maxPages);
  for (let n = 1; n <= count; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    const text = pageText(content.items);
    chars += text.length;
    pages.push(`<page number="${n}">\n${text}\n</page>`);
    page.cleanup();
  }
  const numPages = doc.numPages;
  await task.destroy();
  if (chars === 0) throw new Failure(`${name} has no text layer (scanned?).`);
  const note = numPages > count ? `\n(only the first ${count} of ${numPages} pages were read)` : "";
  return { text: pages.join("\n") + note, pages: numPages, pagesCut: numPages > count };
}

async function extractDocx(bytes, name) {
  const lib = await mammoth();
  try {
    const result = await lib.extractRawText({
      arrayBuffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    });
    return { text: result.value.replace(/\n{3,}/g, "\n\n").trim() };
  } catch (error) {
    throw new Failure(`${name} couldn't be read as Word: ${reason(error)}.`);
  }
}

async function extractXlsx(file, name) {
  const read = await readXlsx();
  let sheets;
  try {
    sheets = await read(file);
  } catch (error) {
    throw new Failure(`${name} couldn't be read as Excel: ${reason(error)}.`);
  }
  const parts = sheets.map(({ sheet, data }) => {
    const rows = (data ?? []).map((row) => row.map(csvCell).join(",")).join("\n");
    return `<sheet name="${xmlAttr(sheet)}">\n${rows}\n</sheet>`;
  });
  return { text: parts.join("\n") };
}

async function extract({ kind, file, name, maxChars, maxPages }) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let result;
  if (kind === "pdf") result = await extractPdf(bytes.slice(), name, maxPages);
  else if (kind === "docx") result = await extractDocx(bytes, name);
  else if (kind === "xlsx") result = await extractXlsx(file, name);
  else result = { text: decodeText(bytes) };
  const full = result.text;
  const truncated = full.length > maxChars;
  return {
    text: truncated ? full.slice(0, maxChars) : full,
    truncated,
    fullText: truncated ? full : undefined,
    pages: result.pages,
    bytes: base64Ascii(bytes),
  };
}

self.addEventListener("message", async (event) => {
  const job = event.data;
  try {
    const result = await extract(job);
    self.postMessage({ id: job.id, ok: true, ...result }, [result.bytes.buffer]);
  } catch (error) {
    const message = error instanceof Failure ? error.message : `${job.name} couldn't be read: ${reason(error)}.`;
    self.postMessage({ id: job.id, ok: false, error: message });
  }
});
