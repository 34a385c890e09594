// @ts-check
// ZIP-based documents (DOCX, XLSX) read within limits, before and while anything inflates.
//
// zipDirectory() reads only the central directory (the file's end) and checks what it declares:
// the number of parts, their unpacked sizes (zip64 fields included) and compression ratios.
// unpackZip() then inflates every part itself, as a stream that stops at the part's declared
// size and at the limit (a declared size can lie), and packs the result again without
// compression. The libraries (mammoth's JSZip, read-excel-file's fflate) only ever get that
// stored ZIP: they copy bytes and never inflate, so nothing they allocate exceeds what was
// checked here (nor does fflate start the nested worker it inflates large parts in).

import { mb } from "./limits.js";

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX_DIRECTORY = 16 * 1024 * 1024;
const RATIO_FLOOR = 1024 * 1024; // a part this small may pack as tightly as it likes

export class ZipRefusal extends Error {}

async function read(blob, start, end) {
  return new DataView(await blob.slice(start, end).arrayBuffer());
}

function u64(view, at) {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
}

async function directoryPlace(blob, name) {
  const tailStart = Math.max(0, blob.size - (22 + 0xffff));
  const tail = await read(blob, tailStart, blob.size);
  let at = tail.byteLength - 22;
  while (at >= 0 && tail.getUint32(at, true) !== EOCD) at--;
  if (at < 0) throw new ZipRefusal(`${name} isn't a ZIP-based document (no central directory).`);
  let count = tail.getUint16(at + 10, true);
  let size = tail.getUint32(at + 12, true);
  let offset = tail.getUint32(at + 16, true);
  if (at >= 20 && tail.getUint32(at - 20, true) === ZIP64_LOCATOR) {
    const record = await read(blob, u64(tail, at - 12), u64(tail, at - 12) + 56);
    if (record.byteLength < 56 || record.getUint32(0, true) !== ZIP64_EOCD)
      throw new ZipRefusal(`${name} is damaged (its zip64 directory is missing).`);
    count = u64(record, 32);
    size = u64(record, 40);
    offset = u64(record, 48);
  }
  return { count, size, offset };
}

/** The parts a ZIP declares, checked against `limits` before anything is inflated. */
export async function zipDirectory(blob, name, limits) {
  const { count, size, offset } = await directoryPlace(blob, name);
  if (count > limits.maxZipEntries)
    throw new ZipRefusal(
      `${name} has ${count.toLocaleString("en")} parts; the limit is ${limits.maxZipEntries.toLocaleString("en")}.`,
    );
  if (size > MAX_DIRECTORY || offset + size > blob.size)
    throw new ZipRefusal(`${name} is damaged (its directory lies outside the file).`);
  const view = await read(blob, offset, offset + size);
  const entries = [];
  const names = new Set();
  let total = 0;
  let at = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > view.byteLength || view.getUint32(at, true) !== CENTRAL)
      throw new ZipRefusal(`${name} is damaged (its directory ends early).`);
    const entry = {
      flags: view.getUint16(at + 8, true),
      method: view.getUint16(at + 10, true),
      crc: view.getUint32(at + 16, true),
      packed: view.getUint32(at + 20, true),
      unpacked: view.getUint32(at + 24, true),
      offset: view.getUint32(at + 42, true),
    };
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    entry.nameBytes = new Uint8Array(view.buffer, at + 46, nameLength).slice();
    entry.name = new TextDecoder().decode(entry.nameBytes);
    readZip64(entry, new DataView(view.buffer, at + 46 + nameLength, extraLength));
    at += 46 + nameLength + extraLength + commentLength;
    if (names.has(entry.name)) throw new ZipRefusal(`${name} is damaged (it holds ${entry.name} twice).`);
    names.add(entry.name);
    if (entry.flags & 1) throw new ZipRefusal(`${name} is password-protected.`);
    if (entry.method !== 0 && entry.method !== 8)
      throw new ZipRefusal(`${name} uses a compression this page can't unpack (method ${entry.method}).`);
    total += entry.unpacked;
    entries.push(entry);
  }
  if (total > limits.maxUnpackedMb * 1024 * 1024) throw tooBig(name, limits, `${mb(total)} MB`);
  for (const entry of entries)
    if (entry.unpacked > RATIO_FLOOR && entry.unpacked > limits.maxZipRatio * Math.max(1, entry.packed))
      throw new ZipRefusal(
        `${name}: its part ${entry.name} unpacks from ${mb(entry.packed)} MB to ${mb(entry.unpacked)} MB, ` +
          `more than ${limits.maxZipRatio} times its size (a zip bomb?); the limit is ${limits.maxZipRatio} to 1.`,
      );
  return entries;
}

function tooBig(name, limits, size = `more than ${limits.maxUnpackedMb} MB`) {
  return new ZipRefusal(
    `${name} unpacks to ${size}; the limit is ${limits.maxUnpackedMb} MB (Settings → Attachments).`,
  );
}

// zip64's extra field (id 1) holds, in this order, the fields whose 32-bit value is 0xFFFFFFFF.
function readZip64(entry, extra) {
  let at = 0;
  while (at + 4 <= extra.byteLength) {
    const id = extra.getUint16(at, true);
    const length = extra.getUint16(at + 2, true);
    if (id === 1) {
      let field = at + 4;
      for (const key of ["unpacked", "packed", "offset"]) {
        if (entry[key] !== 0xffffffff || field + 8 > at + 4 + length) continue;
        entry[key] = u64(extra, field);
        field += 8;
      }
    }
    at += 4 + length;
  }
}

/** A part's bytes, inflated as a stream that stops at its declared size and the budget left. */
async function unpackEntry(blob, entry, name, budget, limits) {
  const local = await read(blob, entry.offset, entry.offset + 30);
  if (local.byteLength < 30 || local.getUint32(0, true) !== LOCAL)
    throw new ZipRefusal(`${name} is damaged (${entry.name} is missing).`);
  const start = entry.offset + 30 + local.getUint16(26, true) + local.getUint16(28, true);
  const packed = blob.slice(start, start + entry.packed);
  if (entry.method === 0) return [new Uint8Array(await packed.arrayBuffer())];
  const cap = Math.min(entry.unpacked, budget);
  const reader = packed.stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel();
        if (size > budget) throw tooBig(name, limits);
        throw new ZipRefusal(`${name}: its part ${entry.name} unpacks to more than it declares (a zip bomb?).`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ZipRefusal) throw error;
    throw new ZipRefusal(`${name} is damaged (${entry.name} can't be unpacked).`);
  }
  if (size !== entry.unpacked) throw new ZipRefusal(`${name} is damaged (${entry.name} has the wrong size).`);
  return chunks;
}

function header(fields) {
  const view = new DataView(new ArrayBuffer(fields.reduce((n, [bytes]) => n + bytes, 0)));
  let at = 0;
  for (const [bytes, value] of fields) {
    if (bytes === 4) view.setUint32(at, value, true);
    else view.setUint16(at, value, true);
    at += bytes;
  }
  return new Uint8Array(view.buffer);
}

/**
 * The ZIP `blob` checked (zipDirectory) and unpacked within the limits, as a Blob of the same
 * ZIP stored without compression. Throws ZipRefusal with the reason.
 */
export async function unpackZip(blob, name, limits) {
  const entries = await zipDirectory(blob, name, limits);
  let budget = limits.maxUnpackedMb * 1024 * 1024;
  const parts = [];
  const central = [];
  let offset = 0;
  for (const entry of entries) {
    const chunks = await unpackEntry(blob, entry, name, budget, limits);
    budget -= entry.unpacked;
    const size = entry.unpacked;
    const utf8 = entry.flags & 0x800;
    const common = [
      [2, 20],
      [2, utf8],
      [2, 0],
      [2, 0],
      [2, 0x21],
      [4, entry.crc],
      [4, size],
      [4, size],
      [2, entry.nameBytes.length],
      [2, 0],
    ];
    parts.push(header([[4, LOCAL], ...common]), entry.nameBytes, ...chunks);
    central.push(
      header([[4, CENTRAL], [2, 20], ...common, [2, 0], [2, 0], [2, 0], [4, 0], [4, offset]]),
      entry.nameBytes,
    );
    offset += 30 + entry.nameBytes.length + size;
  }
  const directorySize = central.reduce((n, part) => n + part.byteLength, 0);
  const end = header([
    [4, EOCD],
    [2, 0],
    [2, 0],
    [2, entries.length],
    [2, entries.length],
    [4, directorySize],
    [4, offset],
    [2, 0],
  ]);
  return new Blob([...parts, ...central, end]);
}
