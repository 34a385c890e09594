// Types only, for TypeScript's checks (jsconfig.json; not copied into the site): the service
// worker's global as web/sw.js uses it. jsconfig.json's library is the page's ("dom"), which has no
// ServiceWorkerGlobalScope; web/sw.js casts `self` to ServiceWorkerScope where it uses the worker's
// own members. A script, not a module: its declarations are global.

interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}

interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  /** the page that asked ("" for a navigation) */
  readonly clientId: string;
  /** the page a navigation loads */
  readonly resultingClientId: string;
  respondWith(response: Response | Promise<Response>): void;
}

interface ExtendableMessageEvent extends ExtendableEvent {
  /** whatever a page posted; web/sw.js answers only a CacheSiteRequest (web/boot/messages.js) */
  readonly data: { type?: unknown } | null | undefined;
  readonly source: ServiceWorkerClient | ServiceWorker | MessagePort | null;
  readonly ports: ReadonlyArray<MessagePort>;
}

/** A page (or worker) the service worker serves: the Client of the service worker's scope. */
interface ServiceWorkerClient {
  readonly id: string;
  readonly url: string;
}

/**
 * The page's global type (the only one jsconfig.json's library has) with the service worker's own
 * members, so that `/** @type {ServiceWorkerScope} *\/ (self)` is a plain downcast.
 */
type ServiceWorkerScope = ServiceWorkerMembers & Window & typeof globalThis;

interface ServiceWorkerMembers {
  readonly registration: ServiceWorkerRegistration;
  readonly clients: {
    claim(): Promise<void>;
    matchAll(options?: { includeUncontrolled?: boolean; type?: string }): Promise<ServiceWorkerClient[]>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: "install" | "activate", listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: "fetch", listener: (event: FetchEvent) => void): void;
  addEventListener(type: "message", listener: (event: ExtendableMessageEvent) => void): void;
}

/** A classic worker's synchronous script loading. */
declare function importScripts(...urls: string[]): void;
