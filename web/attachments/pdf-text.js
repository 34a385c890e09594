// @ts-check
// A PDF page's text from pdf.js's text items (page.getTextContent().items), as `pdftotext` gives it:
// items joined by spaces, a line break where pdf.js marks the end of a line, and a word hyphenated
// across a line end joined again ("manip-" + "ulation" -> "manipulation") when the next line goes
// on in lower case; a hyphen inside a line ("well-known") or before a capital stays.

// A letter, a hyphen (or a soft hyphen) ending the line, and the next line starting in lower case.
const HYPHENATED = /(\p{L})[-\u00AD]\n(?=\p{Ll})/gu;

/**
 * @param {Array<{str?: unknown, hasEOL?: boolean}>} items
 * @returns {string}
 */
export function pageText(items) {
  let text = "";
  for (const item of items) {
    if (typeof item.str !== "string") continue;
    text += item.str;
    if (item.hasEOL) text += "\n";
    else if (item.str && !item.str.endsWith(" ")) text += " ";
  }
  return text
    .replace(/[ \t]+\n/g, "\n")
    .replace(HYPHENATED, "$1")
    .trim();
}
