// Runs web/attachments/zip.js and inspect.js on files in Node (which has Blob and
// DecompressionStream): `node inspect_files.mjs <json>` with [{op, path, name, limits?, out?}];
// prints one answer per file: {ok, ...} or {refused: message}.
import { openAsBlob } from "node:fs";
import { writeFile } from "node:fs/promises";
import { LIMITS } from "../../web/attachments/limits.js";
import { checkImage, uploadRefusal } from "../../web/attachments/inspect.js";
import { unpackZip, zipDirectory } from "../../web/attachments/zip.js";

const answers = [];
for (const { op, path, name, limits: given, out } of JSON.parse(process.argv[2])) {
  const blob = await openAsBlob(path);
  const limits = { ...LIMITS, ...given };
  try {
    if (op === "image") answers.push({ ok: true, ...(await checkImage(blob, name, limits)) });
    else if (op === "directory") answers.push({ ok: true, parts: (await zipDirectory(blob, name, limits)).length });
    else if (op === "upload") answers.push({ ok: true, refused: await uploadRefusal(blob, name, limits) });
    else if (op === "unpack") {
      const stored = await unpackZip(blob, name, limits);
      await writeFile(out, new Uint8Array(await stored.arrayBuffer()));
      answers.push({ ok: true });
    }
  } catch (error) {
    answers.push({ refused: error.message, kind: error.constructor.name });
  }
}
console.log(JSON.stringify(answers));
