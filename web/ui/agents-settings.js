// @ts-check
// Settings → Agents: the subagent tool's agent definitions. Built-ins are read-only
// ("Customize" saves your copy under the same name, which replaces the built-in until deleted);
// yours can be edited as Markdown with frontmatter, exported and deleted; `.md` files are imported
// as "needs confirmation" until confirmed here (or in the dialog asked before their first run).
// Stored in IndexedDB by the Python side (py_agent/app/subagents_plugin.py over subagent_tool.py).

import { h, icon, download } from "./dom.js";
import { confirmDialog } from "./dialogs.js";
import { registerSettingsTab } from "./extensions.js";
import { py } from "./bridge.js";

/**
 * @typedef {object} AgentRow one agent as py_agent/app/subagents_plugin.py lists it (agent_row)
 * @property {string} name
 * @property {string} description
 * @property {string[] | null} tools null: every tool
 * @property {string | null} model null: the session's model
 * @property {string} source "builtin" or where the definition was saved
 * @property {string} status "pending" until an imported agent is confirmed
 * @property {string | null} origin
 * @property {boolean} overridesBuiltin
 */

const TEMPLATE = `---
name: my-agent
description: What this agent is for (shown to the model)
tools: read, grep, find, ls
---

You are ... Describe how the agent works and what it returns.
`;

/**
 * @param {HTMLElement} panel
 * @param {{ markdown: string, previousName: string | null, title: string, rerender: () => unknown }} options
 */
function editor(panel, { markdown, previousName, title, rerender }) {
  const area = h("textarea", {
    class: "input mono",
    id: "agent-editor",
    rows: "16",
    spellcheck: "false",
    "aria-label": "Agent definition (Markdown with frontmatter)",
  });
  area.value = markdown;
  const problem = h("div", { class: "discovery bad", role: "alert", id: "agent-editor-error" });
  const save = h("button", { type: "button", class: "btn primary", id: "agent-save", text: "Save" });
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  cancel.addEventListener("click", () => rerender());
  save.addEventListener("click", async () => {
    save.disabled = true;
    problem.textContent = "";
    try {
      await py("agent_save", { markdown: area.value, previous_name: previousName });
      rerender();
    } catch (error) {
      problem.textContent = error.message;
    } finally {
      save.disabled = false;
    }
  });
  panel.replaceChildren(
    h("h3", { class: "agents-editor-title", text: title }),
    h("p", {
      class: "muted small",
      text: "Frontmatter: name and description (required), tools (a comma list of tool names; leave it out for every tool), model (provider/id; leave it out for the session's model). The text below it is added to the agent's system prompt.",
    }),
    area,
    problem,
    h("div", { class: "row-actions" }, save, cancel),
  );
  setTimeout(() => area.focus(), 0);
}

/**
 * @param {HTMLElement} panel
 * @param {{ rerender: () => unknown }} options
 */
async function renderAgents(panel, { rerender }) {
  /** @type {{ agents: AgentRow[] }} */
  const { agents } = await py("agents_list");
  const note = h("div", { class: "muted small", role: "status", id: "agents-status" });
  const rows = agents.map((a) => {
    const actions = h("div", { class: "row-actions" });
    const builtin = a.source === "builtin";
    const edit = h("button", {
      type: "button",
      class: "btn small",
      text: builtin ? "Customize" : "Edit",
      "aria-label": `${builtin ? "Customize" : "Edit"} ${a.name}`,
    });
    edit.addEventListener("click", async () => {
      const { markdown } = await py("agent_markdown", { name: a.name });
      editor(panel, {
        markdown,
        previousName: builtin ? null : a.name,
        title: builtin ? `Customize ${a.name}` : `Edit ${a.name}`,
        rerender,
      });
    });
    actions.append(edit);
    if (a.status === "pending") {
      const confirm = h("button", {
        type: "button",
        class: "btn small primary",
        text: "Confirm",
        "aria-label": `Confirm ${a.name}`,
      });
      confirm.addEventListener("click", async () => {
        await py("agent_confirm", { name: a.name });
        rerender();
      });
      actions.append(confirm);
    }
    if (!builtin) {
      const exp = h("button", {
        type: "button",
        class: "btn small ghost",
        text: "Export",
        "aria-label": `Export ${a.name}`,
      });
      exp.addEventListener("click", async () => {
        const { markdown } = await py("agent_markdown", { name: a.name });
        download(`${a.name.replace(/[^\w.-]+/g, "_") || "agent"}.md`, markdown, "text/markdown");
      });
      const del = h("button", {
        type: "button",
        class: "btn small ghost danger",
        text: a.overridesBuiltin ? "Reset" : "Delete",
        "aria-label": `${a.overridesBuiltin ? "Reset" : "Delete"} ${a.name}`,
      });
      del.addEventListener("click", async () => {
        const text = a.overridesBuiltin
          ? `Your version of ${a.name} is deleted; the built-in one is used again.`
          : `The agent ${a.name} is deleted from this browser.`;
        if (
          await confirmDialog(text, {
            title: a.overridesBuiltin ? "Reset agent" : "Delete agent",
            confirmLabel: a.overridesBuiltin ? "Reset" : "Delete",
            danger: true,
          })
        ) {
          await py("agent_delete", { name: a.name });
          rerender();
        }
      });
      actions.append(exp, del);
    }
    const badges = [
      h("span", { class: "badge", text: builtin ? "built-in" : a.overridesBuiltin ? "customized" : "yours" }),
      a.status === "pending" ? h("span", { class: "badge agent-pending", text: "needs confirmation" }) : null,
    ];
    const facts = [
      a.tools ? `tools: ${a.tools.join(", ")}` : "all tools",
      a.model ? `model: ${a.model}` : "session model",
      a.origin ? `from ${a.origin}` : "",
    ]
      .filter(Boolean)
      .join(" · ");
    return h(
      "li",
      { class: "provider-card agent-row", dataset: { name: a.name, status: a.status, source: a.source } },
      h("div", {}, h("strong", { class: "mono", text: a.name }), ...badges),
      h("div", { class: "small", text: a.description }),
      h("div", { class: "small muted", text: facts }),
      actions,
    );
  });
  const add = h("button", { type: "button", class: "btn primary", id: "agent-new" }, icon("plus"), "New agent");
  add.addEventListener("click", () =>
    editor(panel, { markdown: TEMPLATE, previousName: null, title: "New agent", rerender }),
  );
  const file = h("input", {
    type: "file",
    id: "agent-import-file",
    accept: ".md,.markdown,text/markdown,text/plain",
    multiple: true,
    hidden: true,
  });
  const importButton = h(
    "button",
    { type: "button", class: "btn", id: "agent-import" },
    icon("upload"),
    "Import .md files",
  );
  importButton.addEventListener("click", () => file.click());
  file.addEventListener("change", async () => {
    /** @type {string[]} */
    const problems = [];
    let imported = 0;
    for (const f of [...(file.files ?? [])]) {
      try {
        await py("agent_import", { text: await f.text(), filename: f.name });
        imported += 1;
      } catch (error) {
        problems.push(error.message);
      }
    }
    file.value = "";
    await rerender();
    const status = panel.querySelector("#agents-status");
    if (status)
      status.textContent = [imported ? `${imported} imported: review and confirm before they run.` : "", ...problems]
        .filter(Boolean)
        .join(" ");
  });
  panel.replaceChildren(
    h("p", {
      class: "muted",
      text: "Agents the subagent tool can delegate to. Each runs with its own context: its system prompt and the task, never your conversation. Imported agents carry prompts written elsewhere: they need your confirmation before they run.",
    }),
    h("ul", { class: "provider-list agent-list" }, ...rows),
    note,
    h("div", { class: "section-foot row-actions" }, importButton, add, file),
  );
}

registerSettingsTab("agents", "Agents", renderAgents);
