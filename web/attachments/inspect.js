// @ts-check
// What a file claims to be, read from its first bytes and checked against the limits before
// anything decodes it: an image's width × height (PNG IHDR, JPEG SOF, GIF, WebP, BMP), a ZIP-based
// document's central directory (zip.js). Used by the attachment workers and, on the page's
// thread (it reads only small slices of the file), by the Files panel's uploads.

import { mb } from "./limits.js";
import { ZipRefusal, zipDirectory } from "./zip.js";

const HEAD = 4 * 1024 * 1024; // a JPEG's SOF comes after its APPn segments (EXIF: up to 64 KB each)

export class Refusal extends Error {}

function ascii(bytes, start, length) {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

/** Format and size from an image file's first bytes: { format, width, height } | { format } | null. */
export function imageSize(bytes) {
  const head = bytes.subarray(0, HEAD);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const has = (n) => head.length >= n;
  if (has(24) && head[0] === 0x89 && ascii(head, 1, 3) === "PNG" && ascii(head, 12, 4) === "IHDR")
    return { format: "PNG", width: view.getUint32(16), height: view.getUint32(20) };
  if (has(10) && ascii(head, 0, 4) === "GIF8")
    return { format: "GIF", width: view.getUint16(6, true), height: view.getUint16(8, true) };
  if (has(26) && ascii(head, 0, 2) === "BM") {
    if (view.getUint32(14, true) === 12)
      return { format: "BMP", width: view.getUint16(18, true), height: view.getUint16(20, true) };
    return { format: "BMP", width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
  }
  if (has(30) && ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 4) === "WEBP") return webpSize(head, view);
  if (has(4) && head[0] === 0xff && head[1] === 0xd8) return jpegSize(head);
  return null;
}

/** @typedef {{format: string, width?: number, height?: number}} ImageHeader the size is absent when the header has none */

/**
 * imageSize() of a Blob, reading only its start.
 * @param {Blob} blob
 * @returns {Promise<ImageHeader | null>}
 */
export async function imageHeader(blob) {
  return imageSize(new Uint8Array(await blob.slice(0, HEAD).arrayBuffer()));
}

function webpSize(head, view) {
  const chunk = ascii(head, 12, 4);
  if (chunk === "VP8 ")
    return { format: "WebP", width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = view.getUint32(21, true);
    return { format: "WebP", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") {
    const width = 1 + (head[24] | (head[25] << 8) | (head[26] << 16));
    const height = 1 + (head[27] | (head[28] << 8) | (head[29] << 16));
    return { format: "WebP", width, height };
  }
  return { format: "WebP" };
}

function jpegSize(bytes) {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return { format: "JPEG" };
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return {
        format: "JPEG",
        height: (bytes[at + 5] << 8) | bytes[at + 6],
        width: (bytes[at + 7] << 8) | bytes[at + 8],
      };
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) at += 2;
    else at += 2 + ((bytes[at + 2] << 8) | bytes[at + 3]);
  }
  return { format: "JPEG" };
}

/** Throws Refusal unless the image's header names a size within `limits` (so decoding it is bounded). */
export async function checkImage(blob, name, limits) {
  const header = await imageHeader(blob);
  if (!header) throw new Refusal(`${name}: this browser can't decode the image (HEIC?). Convert it to JPEG or PNG.`);
  if (!header.width || !header.height)
    throw new Refusal(`${name}: the ${header.format} header is damaged (no image size in it).`);
  checkPixels(header, name, limits);
  return header;
}

/**
 * Throws Refusal when the size an image's header claims is over the limit.
 * @param {ImageHeader} header
 * @param {string} name
 * @param {{maxMegapixels: number}} limits
 */
export function checkPixels({ width, height }, name, limits) {
  const megapixels = (width * height) / 1e6;
  if (megapixels <= limits.maxMegapixels) return;
  const shown = megapixels >= 10 ? Math.round(megapixels) : megapixels.toFixed(1);
  const decoded = width * height * 4;
  const bytes = decoded >= 2 ** 30 ? `${(decoded / 2 ** 30).toFixed(1)} GB` : `${mb(decoded)} MB`;
  throw new Refusal(
    `${name} is ${width} x ${height} pixels (${shown} megapixels, ${bytes} decoded); ` +
      `the limit is ${limits.maxMegapixels} megapixels (Settings → Attachments).`,
  );
}

const ZIP_DOCUMENTS = new Set(["docx", "docm", "xlsx", "xlsm", "pptx", "odt", "ods", "odp"]);

/**
 * The Files panel's check of an upload, with the attachments' limits: a ZIP-based document's
 * directory, the size an image's header claims (the panel's preview decodes it). Returns the
 * reason a file is refused, or null.
 */
export async function uploadRefusal(file, name, limits) {
  try {
    if (ZIP_DOCUMENTS.has(name.toLowerCase().split(".").pop())) await zipDirectory(file, name, limits);
    else {
      const header = await imageHeader(file);
      if (header?.width && header?.height) checkPixels(header, name, limits);
    }
  } catch (error) {
    if (error instanceof Refusal || error instanceof ZipRefusal) return error.message;
    throw error;
  }
  return null;
}
