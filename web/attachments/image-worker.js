// Attached images, in a dedicated module worker: decoded with createImageBitmap (EXIF orientation
// applied) and, when needed, scaled and re-encoded on an OffscreenCanvas to the limits of
// py_agent/app/attachments.py (as pi's CLI does: at most 2000 px a side and 4.5 MB as base64;
// GIF and BMP become PNG). Also draws the chip's thumbnail. The size the image's header claims is
// checked first (inspect.js): nothing larger than the limit is ever decoded.
//
// Message in:  { id, file: Blob, name, mimeType, limits: { maxSide, maxBase64, maxMegapixels } }
// Message out: { id, ok: true, data, mimeType, width, height, originalWidth, originalHeight,
//                resized, thumb: Blob, bytes (the original file in base64, as ASCII bytes) } | { id, ok: false, error }

import { base64, base64Ascii } from "./codec.js";
import { checkImage } from "./inspect.js";

const KEEP = new Set(["image/png", "image/jpeg", "image/webp"]);
const THUMB = 160;

function base64Length(size) {
  return 4 * Math.ceil(size / 3);
}

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
    out = await fit(bitmap, maxSide, maxBase64);
    if (!out) throw new Error(`${name}: couldn't be reduced below 4.5 MB.`);
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

self.addEventListener("message", async (event) => {
  const job = event.data;
  try {
    const result = await process(job);
    self.postMessage({ id: job.id, ok: true, ...result }, [result.bytes.buffer]);
  } catch (error) {
    self.postMessage({ id: job.id, ok: false, error: error?.message || String(error) });
  }
});
