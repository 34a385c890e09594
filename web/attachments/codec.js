// @ts-check
// Byte helpers shared by the attachment workers.

export function base64(bytes) {
  let out = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) out += String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK));
  return btoa(out);
}

// `cut`: the bytes are the start of a longer file, so a character split at their end is not an error.
export function decodeText(bytes, cut = false) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: cut });
  } catch {
    return new TextDecoder("windows-1252").decode(bytes);
  }
}

// Base64 as ASCII bytes: posted to the page as a transferred buffer (no copy on its main thread,
// however large the file); decoded to a string only when the message is sent.
export function base64Ascii(bytes) {
  return new TextEncoder().encode(base64(bytes));
}
