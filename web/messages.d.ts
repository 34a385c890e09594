// Types only, for TypeScript's checks (jsconfig.json; not copied into the site): the messages between
// the page and its workers outside the page's start (the start's own are in web/boot/messages.js),
// and the worker's global as those messages see it.

/**
 * A dedicated worker's own global, as far as its messages go: jsconfig.json's library is the page's
 * ("dom"), which has no DedicatedWorkerGlobalScope. A worker casts `self` to this once.
 */
export interface WorkerScope<In, Out> {
  postMessage(message: Out, transfer?: Transferable[]): void;
  addEventListener(type: "message", listener: (event: MessageEvent<In>) => void): void;
  onmessage: ((event: MessageEvent<In>) => void) | null;
}

// ---- web/sandbox/grep.js <-> web/sandbox/grep-worker.js ----

/** [index of the file in the run, its text with LF line ends] */
export type GrepFile = [number, string];

/** The page to the grep worker: a run's pattern (already JavaScript's syntax), its files, its end. */
export type GrepRequest =
  | { type: "start"; id: number; source: string; flags: string; limit: number }
  | { type: "files"; id: number; items: GrepFile[] }
  | { type: "end"; id: number };

/** [index of the file, the 1-based numbers of its matching lines] */
export type GrepMatch = [number, number[]];

/** The grep worker to the page: the matches (at most `limit` lines in all), or why RegExp refused the pattern. */
export type GrepReply =
  | { type: "done"; id: number; matches: GrepMatch[] }
  | { type: "error"; id: number; message: string };

/** How a search ended: its matches, or why it has none. */
export type GrepOutcome =
  | { ok: true; matches: GrepMatch[] }
  | { ok: false; timedOut?: true; aborted?: true; error?: string };

/** What a search resolves with (grep.js start().result), never a rejection. */
export type GrepResult = GrepOutcome & { durationMs: number };

// ---- web/attachments/attachments.js <-> web/attachments/image-worker.js, extract-worker.js ----

/** The limits of an attached image (py_agent/app/attachments.py). */
export type ImageLimits = { maxSide: number; maxBase64: number; maxMegapixels: number };

/** The page to the image worker: one attached image. */
export type ImageJob = { id: string; kind: "image"; file: Blob; name: string; mimeType: string; limits: ImageLimits };

/** What the image worker made of it: the image for the model (base64), the chip's thumbnail and the original's bytes. */
export type ImageDone = {
  data: string;
  mimeType: string;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
  resized: boolean;
  thumb: Blob;
  /** the original file in base64, as ASCII bytes (transferred) */
  bytes: Uint8Array;
};

/** The limits of an attached document (web/attachments/limits.js). */
export type DocumentLimits = {
  maxTextChars: number;
  maxPages: number;
  releaseMb: number;
  [limit: string]: number;
};

/** The page to the extraction worker: one attached document. */
export type ExtractJob = {
  id: string;
  kind: "pdf" | "docx" | "xlsx" | "text";
  file: Blob;
  name: string;
  limits: DocumentLimits;
};

/** Its text as extracted (cut at the limit: `truncated`), and the original's bytes. */
export type ExtractDone = {
  text: string;
  truncated: boolean;
  fullText?: string;
  textIsFile?: boolean;
  pages?: number;
  notice?: string;
  /** the file was large: the page ends the worker, freeing what its libraries held */
  release: boolean;
  /** the original file in base64, as ASCII bytes (transferred) */
  bytes: Uint8Array;
};

/** A worker's answer to a job: its result, or what went wrong (said for the person who attached the file). */
export type JobReply<Done> =
  | ({ id: string; ok: true } & Done)
  | { id: string; ok: false; error: string; release?: boolean };

// ---- web/sandbox/host.js <-> frame.template.html <-> web/sandbox/js-worker.js, py-worker.js ----
// Every message between the page and a sandbox's worker carries the run's random token; the page
// drops any other. What comes from a sandbox is untrusted: host.js checks it field by field.

/** The frame hands the worker its start (and a MessagePort, its only line to the page). */
export type SandboxStart<Init> = { token: string; init: Init };

/** The javascript tool's start: the code, whether it may use the network, and its output limits. */
export type JsInit = { code: string; network: boolean; limits?: { consoleBytes?: number; valueChars?: number } };

export type ConsoleLine = { level: string; text: string };

/** A thrown value as the javascript tool reports it. */
export type JsError = { name: string; message: string; stack: string };

/** The javascript worker to the page (each also carries the token). */
export type JsWorkerMessage = { token?: string } & (
  | { type: "ready" }
  | { type: "console"; lines: ConsoleLine[] }
  | {
      type: "fs";
      id: number;
      op: "read" | "write" | "list";
      path: string;
      encoding?: "utf8" | "binary";
      data?: string | Uint8Array;
    }
  | { type: "done"; ok: true; value: string | null }
  | { type: "done"; ok: false; phase?: "compile"; error: JsError }
);

/** The page to the javascript worker: the answer to a workspace request (`value` when ok, else `error`). */
export type JsPageMessage = {
  token: string;
  type: "fs-result";
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
};

/** The python tool's start: Pyodide's own modules as text, the runtime's Python, file names and limits. */
export type PyInit = {
  pyodideMjs: string;
  asmMjs: string;
  runtime: string;
  lockName?: string;
  stdlibName?: string;
  network: boolean;
  limits?: { outputBytes?: number };
};

export type OutputChunk = { stream: "stdout" | "stderr"; text: string };

/** A workspace file the run created or changed (its bytes transferred). */
export type ChangedFile = { path: string; data: Uint8Array };

/** What a python run sends back (web/sandbox/py-runtime.py _pyagent_run and _pyagent_collect). */
export type PyOutcome =
  | { ok: true; value: string | null }
  | { ok: false; error: { type: string; message: string; traceback: string } };

/** The python worker to the page (each also carries the token). */
export type PyWorkerMessage = { token?: string } & (
  | { type: "ready" }
  | { type: "boot-error"; message: string }
  | { type: "fetch"; id: number; name: string }
  | { type: "stream"; chunks: OutputChunk[] }
  | ({ type: "result"; id: number; changes: { files: ChangedFile[]; deletes: string[] } } & PyOutcome)
);

/** The page to the python worker: a run (with the workspace's changes since the last), or a runtime file asked for. */
export type PyPageMessage = { token: string } & (
  | {
      type: "run";
      id: number;
      code: string;
      sync: { reset?: boolean; files?: ChangedFile[]; deletes?: string[] };
    }
  | { type: "fetch-result"; id: number; ok: boolean; body?: ArrayBuffer; contentType?: string; error?: string }
);
