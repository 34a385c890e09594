// @ts-check
// Front-end parts of plugins: each module imported here registers tool renderers and side panels
// (see ui/extensions.js). The Python side of a plugin is listed in py_agent/app/plugins.py (default_plugins).
//
// Example: import "./sandbox/panel.js";
import "./sandbox/panel.js"; // the workspace panel and the cards of the workspace and code tools
import "./ui/subagents.js"; // the subagent card and Settings → Agents
import "./attachments/settings-tab.js"; // Settings → Attachments
import "./ui/mcp-settings.js"; // Settings → MCP servers and the cards of MCP tools
