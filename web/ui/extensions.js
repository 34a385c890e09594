// @ts-check
// Extension points of the page, for features that add tools (the workspace, subagents):
//
// registerToolRenderer(name, renderer)
//   How a tool call named `name` looks in the chat (`name` ending in "*": every tool with that prefix). `renderer(call)` gets
//   { name, id, args, status: "streaming"|"running"|"done"|"error"|"interrupted", result, partial }
//   (`result`/`partial`: the tool-result message / partial result as JSON) and returns
//   { title?: string, summary?: string | Node, body?: Node } — any part left out falls back to the
//   generic card (arguments as JSON, the result's text). Renderers build DOM with textContent or
//   renderMarkdown(): never put model-written strings into innerHTML.
//
// registerPanel(id, { title, mount(container, api), onMessage?(data), onOpen?(), onClose?() })
//   A side panel (e.g. the workspace preview). Python opens it and sends it data through
//   ToolHost.open_panel / post_to_panel; the panel answers through api.send(data), which reaches
//   the Python handler its plugin declares (Plugin.panel_handlers in py_agent/app/plugin_contract.py).
//
// registerSettingsTab(id, label, render)
//   An extra tab of Settings (before "Chat"); `render(panel, { app, rerender })` fills the panel.

const toolRenderers = new Map();
const panels = new Map();
const settingsTabs = new Map();

export function registerSettingsTab(id, label, render) {
  settingsTabs.set(id, [id, label, render]);
}

export function pluginSettingsTabs() {
  return [...settingsTabs.values()];
}

export function registerToolRenderer(name, renderer) {
  toolRenderers.set(name, renderer);
}

export function toolRenderer(name) {
  const exact = toolRenderers.get(name);
  if (exact) return exact;
  // A name registered as "prefix*" renders every tool whose name starts with the prefix (MCP tools).
  for (const [pattern, renderer] of toolRenderers) {
    if (pattern.endsWith("*") && String(name ?? "").startsWith(pattern.slice(0, -1))) return renderer;
  }
  return null;
}

export function registerPanel(id, panel) {
  panels.set(id, panel);
}

export function panel(id) {
  return panels.get(id) ?? null;
}
