// @ts-check
// Persistent storage: ask the browser not to evict this site's data, and say what it answered.
// (Chromium decides without a prompt, from how the site is used; Firefox asks the user.)

import { toast } from "./toasts.js";

/** @type {StorageEstimate} what a browser that says nothing of its usage reads as */
const NO_ESTIMATE = {};

export async function storageStatus() {
  const storage = navigator.storage;
  if (!storage?.persisted) return { supported: false, persisted: false, usage: 0, quota: 0 };
  const [persisted, estimate] = await Promise.all([
    storage.persisted().catch(() => false),
    storage.estimate ? storage.estimate().catch(() => NO_ESTIMATE) : Promise.resolve(NO_ESTIMATE),
  ]);
  return { supported: true, persisted, usage: estimate.usage ?? 0, quota: estimate.quota ?? 0 };
}

export async function requestPersistence({ announceResult = false } = {}) {
  const storage = navigator.storage;
  if (!storage?.persist) {
    if (announceResult)
      toast("This browser cannot keep storage persistent: export the sessions you want to keep.", "warn");
    return false;
  }
  if (await storage.persisted().catch(() => false)) {
    if (announceResult) toast("Storage is already persistent: your sessions will not be cleared to make room.", "info");
    return true;
  }
  const granted = await storage.persist().catch(() => false);
  if (announceResult || granted) {
    toast(
      granted
        ? "Saved sessions are in persistent storage: the browser will not clear them to make room."
        : "The browser keeps sessions in best-effort storage: it may clear them if the disk runs low. Export the ones you want to keep.",
      granted ? "info" : "warn",
    );
  }
  return granted;
}
