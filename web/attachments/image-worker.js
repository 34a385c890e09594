// @ts-check
// Attached images, in a dedicated module worker: decoded with createImageBitmap (EXIF orientation
// applied) and, when needed, scaled and re-encoded on an OffscreenCanvas to the limits of
// py_agent/app/attachments.py (as pi's CLI does: at most 2000 px a side and 4.5 MB as base64;
// GIF and BMP become PNG). Also draws the chip's thumbnail. The size the image's header claims is
// checked first (inspect.js): nothing larger than the limit is ever decoded.
//
// Message in: ImageJob; out: JobReply<ImageDone> (web/messages.d.ts): the image for the model, its
// size before and after, the chip's thumbnail and the original's bytes, or what went wrong.

import { base64, base64Ascii } from "./codec.js";
import { checkImage } from "./inspect.js";

/** @typedef {import("../messages").ImageJob} ImageJob */
/** @typedef {import("../messages").ImageDone} ImageDone */

const scope = /** @type {import("../messages").WorkerScope<ImageJob, import("../messages").JobReply<ImageDone>>} */ (
  /** @type {unknown} */ (self)
);

const KEEP = new Set(["image/png", "image/jpeg", "image/webp"]);
const THUMB = 160;

/** @param {number} size */
function base64Length(size) {
  return 4 * Math.ceil(size / 3);
}

/**
 * @param {ImageBitmap} bitmap
 * @param {number} width
 * @param {number} height
 * @param {string} type
 * @param {number} [quality]
 */
async function encode(bitmap, width, height, type, quality) {
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext("2d");
  if (type === "image/jpeg") {
    ctx.fillStyle = "#fff"; // JPEG has no alpha: transparent parts become white, not black
    ctx.fillRect(0, 0, width, height);
  }
  ctx.drawImage(bitmap, 0, 0, width, height);
  return canvas.convertToBlob(quality === undefined ? { type } : { type, quality });
}

/**
 * @param {ImageBitmap} bitmap
 * @param {number} maxSide
 * @param {number} maxBase64
 * @returns {Promise<{blob: Blob, width: number, height: number} | null>}
 */
async function fit(bitmap, maxSide, maxBase64) {
  let scale = Math.min(1, maxSide / Math.max(bitmap.width, bitmap.height));
  for (let attempt = 0; attempt < 12; attempt++) {
    const width = Math.max(1, Math.round(bitmap.width * scale));
    const height = Math.max(1, Math.round(bitmap.height * scale));
    const png = await encode(bitmap, width, height, "image/png");
    const jpeg = await encode(bitmap, width, height, "image/jpeg", 0.8);
    const best = png.size <= jpeg.size ? png : jpeg;
    if (base64Length(best.size) <= maxBase64) return { blob: best, width, height };
    for (const quality of [0.7, 0.55, 0.4]) {
      const smaller = await encode(bitmap, width, height, "image/jpeg", quality);
      if (base64Length(smaller.size) <= maxBase64) return { blob: smaller, width, height };
    }
    scale *= 0.75;
  }
  return null;
}

/**
 * @param {ImageJob} job
 * @returns {Promise<ImageDone>}
 */
async function process({ file, name, mimeType, limits }) {
  const { maxSide, maxBase64 } = limits;
  await checkImage(file, name, limits);
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch {
    throw new Error(`${name}: this browser can't decode the image (HEIC?). Convert it to JPEG or PNG.`);
  }
  const originalWidth = bitmap.width;
  const originalHeight = bitmap.height;
  const original = new Uint8Array(await file.arrayBuffer());
  let out = { blob: file, width: originalWidth, height: originalHeight };
  let type = mimeType;
  const keep =
    KEEP.has(mimeType) && Math.max(originalWidth, originalHeight) <= maxSide && base64Length(file.size) <= maxBase64;
  if (!keep) {
    const fitted = await fit(bitmap, maxSide, maxBase64);
    if (!fitted) throw new Error(`${name}: couldn't be reduced below 4.5 MB.`);
    out = fitted;
    type = out.blob.type;
  }
  const tscale = Math.min(1, THUMB / Math.max(originalWidth, originalHeight));
  const thumb = await encode(
    bitmap,
    Math.max(1, Math.round(originalWidth * tscale)),
    Math.max(1, Math.round(originalHeight * tscale)),
    "image/png",
  );
  bitmap.close();
  const data = out.blob === file ? base64(original) : base64(new Uint8Array(await out.blob.arrayBuffer()));
  return {
    data,
    mimeType: type,
    width: out.width,
    height: out.height,
    originalWidth,
    originalHeight,
    resized: !keep,
    thumb,
    bytes: base64Ascii(original),
  };
}

scope.addEventListener("message", async (event) => {
  const job = event.data;
  try {
    const result = await process(job);
    scope.postMessage({ id: job.id, ok: true, ...result }, [result.bytes.buffer]);
  } catch (error) {
    scope.postMessage({ id: job.id, ok: false, error: error?.message || String(error) });
  }
});
