// Types only, for TypeScript's checks (jsconfig.json; not copied into the site): the parts of the
// File System Access API that only Chromium has, so TypeScript's "dom" library lacks them: the
// folder picker and a handle's permissions (web/sandbox/folder.js). A script, not a module: its
// declarations are global.

type FileSystemPermissionMode = "read" | "readwrite";

interface FileSystemHandle {
  queryPermission(descriptor?: { mode?: FileSystemPermissionMode }): Promise<PermissionState>;
  requestPermission(descriptor?: { mode?: FileSystemPermissionMode }): Promise<PermissionState>;
}

interface Window {
  /** Chromium only: rejects with an AbortError when the picker is closed */
  showDirectoryPicker?: (options?: {
    id?: string;
    mode?: FileSystemPermissionMode;
  }) => Promise<FileSystemDirectoryHandle>;
}
