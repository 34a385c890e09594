// Types only, for TypeScript's checks (jsconfig.json; not copied into the site): the parts of the
// vendored libraries (static/vendor/, fetched at build time: buildsys/config.py) that the page's
// scripts use. They are not in the repository, so their imports resolve to these declarations (a
// script, not a module: its declarations are global).

// ---- pdf.js (web/attachments/extract-worker.js; web/files/preview.js draws pages) ----

declare module "*/vendor/pdf.min.js" {
  export type TextItem = { str: string; hasEOL?: boolean; transform?: number[]; width?: number; height?: number };
  export interface PageViewport {
    width: number;
    height: number;
  }
  export interface PdfPage {
    getTextContent(): Promise<{ items: TextItem[] }>;
    getViewport(options: { scale: number }): PageViewport;
    render(options: { canvasContext: CanvasRenderingContext2D; viewport: PageViewport }): { promise: Promise<void> };
    cleanup(): void;
  }
  export interface PdfDocument {
    numPages: number;
    getPage(number: number): Promise<PdfPage>;
    /** the task that loaded it: its destroy() ends the document and its worker (pdf.js 6 has no
     * destroy() on the document itself) */
    loadingTask: { destroy(): Promise<void> };
  }
  /** where pdf.js starts its worker from */
  export const GlobalWorkerOptions: { workerSrc: string };
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

// ---- marked, DOMPurify and highlight.js (web/ui/markdown.js) ----

declare module "*/vendor/marked.esm.js" {
  /** A token of marked's lexer: the fields web/ui/markdown.js reads (a table's cells, a list's items). */
  export interface Token {
    type: string;
    raw: string;
    tokens?: Token[];
    items?: Token[];
    header?: { tokens: Token[] }[];
    rows?: { tokens: Token[] }[][];
  }
  /** The lexer's tokens, with the text's link reference definitions. */
  export type TokensList = Token[] & { links: Record<string, { href: string | null; title: string | null }> };
  export interface MarkedOptions {
    gfm?: boolean;
    breaks?: boolean;
    async?: boolean;
    renderer?: { image?(token: { href: string; title: string | null; text: string }): string };
  }
  export class Marked {
    constructor(...options: MarkedOptions[]);
    parse(src: string, options: MarkedOptions & { async: false }): string;
    lexer(src: string, options?: MarkedOptions): TokensList;
    parser(tokens: Token[], options?: MarkedOptions): string;
  }
}

declare module "*/vendor/purify.es.js" {
  export interface Config {
    USE_PROFILES?: { html?: boolean; svg?: boolean; svgFilters?: boolean; mathMl?: boolean };
    FORBID_TAGS?: string[];
    FORBID_ATTR?: string[];
    ALLOW_DATA_ATTR?: boolean;
    ALLOW_ARIA_ATTR?: boolean;
    RETURN_DOM_FRAGMENT?: boolean;
  }
  const DOMPurify: {
    setConfig(config: Config): void;
    addHook(entryPoint: "afterSanitizeAttributes", hook: (node: Element) => void): void;
    /** a DocumentFragment: web/ui/markdown.js sets RETURN_DOM_FRAGMENT once, with setConfig */
    sanitize(dirty: string): DocumentFragment;
  };
  export default DOMPurify;
}

declare module "*/vendor/highlight.min.js" {
  export interface HighlightResult {
    /** the code as HTML: escaped text in spans with hljs-* classes */
    value: string;
    language?: string;
    relevance: number;
  }
  const hljs: {
    getLanguage(name: string): object | undefined;
    highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): HighlightResult;
    highlightAuto(code: string, languageSubset?: string[]): HighlightResult;
  };
  export default hljs;
}
