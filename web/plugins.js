// Front-end parts of plugins: each module imported here registers tool renderers and side panels
// (see ui/extensions.js). The Python side of a plugin is listed in py_agent/web/plugins.py.
//
// Example: import "./sandbox/panel.js";
import "./sandbox/panel.js"; // issue 6: the workspace panel and the cards of the workspace and code tools
import "./ui/subagents.js"; // issue 7: the subagent card and Settings → Agents

export {};
