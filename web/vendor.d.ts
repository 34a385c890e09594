// Types only, for TypeScript's checks (jsconfig.json; not copied into the site): the parts of the
// vendored libraries (static/vendor/, fetched at build time: buildsys/config.py) that the page's
// scripts use. They are not in the repository, so their imports resolve to these declarations (a
// script, not a module: its declarations are global).

// ---- pdf.js (web/attachments/extract-worker.js) ----

declare module "*/vendor/pdf.min.js" {
  export type TextItem = { str: string; hasEOL?: boolean; transform?: number[]; width?: number; height?: number };
  export interface PdfPage {
    getTextContent(): Promise<{ items: TextItem[] }>;
    cleanup(): void;
  }
  export interface PdfDocument {
    numPages: number;
    getPage(number: number): Promise<PdfPage>;
  }
  export function getDocument(options: {
    data: Uint8Array;
    isEvalSupported?: boolean;
    stopAtErrors?: boolean;
    verbosity?: number;
  }): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
}

/** pdf.js's worker code, run in the extraction worker itself (pdf.js's "fake worker"). */
declare module "*/vendor/pdf.worker.min.js" {
  export const WorkerMessageHandler: unknown;
}

// ---- mammoth and read-excel-file: UMD bundles, which set a global when imported as modules ----

declare module "*/vendor/mammoth.browser.min.js" {}
declare module "*/vendor/read-excel-file.min.js" {}

/** pdf.js looks for its worker code here before it would start a worker of its own. */
declare var pdfjsWorker: unknown;

interface Window {
  mammoth?: { extractRawText(input: { arrayBuffer: ArrayBuffer }): Promise<{ value: string }> };
  /** each sheet's name and rows of cells */
  readXlsxFile?: (
    file: Blob,
  ) => Promise<{ sheet: string; data: (string | number | boolean | Date | null)[][] | null }[]>;
}
