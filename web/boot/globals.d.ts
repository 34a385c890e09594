// Types only, for TypeScript's checks of web/boot/ (jsconfig.json); not copied into the site. The
// globals the page's start sets on window (docs/boot.md, "Window globals").

type BootOutcome = {
  /** "restored" | "none" | "pending", then "made" | "failed" once the next visit's snapshot is made */
  snapshot?: string;
  /** the snapshot restored: "kept" (made after an earlier visit) or "shipped" (with the site); null when none */
  from?: "kept" | "shipped" | null;
  /** settles once the snapshot for the next visit is kept: "made" or "failed: <reason>" */
  stored?: Promise<string>;
  /** why a snapshot was not restored (another build, damaged, a mismatch), when it was not */
  rejected?: string;
};

type PyAgentGlobal = {
  state: "loading" | "ready" | "error";
  pyodide: import("./runtime.js").Pyodide | null;
  manifest: import("./messages.js").Manifest | null;
  versions: { python: string; py_agent: string; pydantic: string; pyodide: string } | null;
  error: unknown;
  /** ms since navigation start when the boot was ready (bench/boot.py reads it) */
  readyAt: number | null;
  timings: Record<string, number>;
  marks: Record<string, number>;
  boot: BootOutcome;
  /** "ready" once the service worker has cached the whole site, "unsupported", or "failed: <reason>" */
  offline: Promise<string> | null;
  /** once ready: the features left out because the page is not in a secure context */
  needsHttps: string[];
  ready?: Promise<{
    pyodide: import("./runtime.js").Pyodide;
    manifest: import("./messages.js").Manifest;
    versions: PyAgentGlobal["versions"];
  }>;
};

/** What web/boot/early-start.js read for the first screen: the sessions' records and the open session's last entries. */
type EarlyRecords = {
  records: unknown[] | null;
  count: number | null;
  session: { id: string; record: unknown; lower: number; entries: unknown[] | null } | null;
};

interface Window {
  pyAgent: PyAgentGlobal;
  /** web/app.js: the app, once it started (web/ui/reliability.js reads the open session from it) */
  pyAgentApp?: { currentId?: string | null; state?: { readOnly?: boolean; streaming?: boolean } };
  /** web/boot/early-start.js: the app's IndexedDB, opened as the page started (null: not opened) */
  pyAgentEarlyDatabase?: Promise<IDBDatabase | null>;
  /** web/boot/early-start.js: what it read for the first screen (null: nothing read) */
  pyAgentEarlyRecords?: Promise<EarlyRecords | null>;
  /** web/boot/early-start.js: web/boot/read-ahead.js, started before its request (taken by web/boot/site-cache.js) */
  pyAgentEarlyReadAhead?: { worker: Worker; failures: (string | null)[] } | null;
}
