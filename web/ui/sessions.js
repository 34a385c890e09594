// @ts-check
// The session list: newest first, grouped by day, searchable (title and conversation text);
// each row opens its session, and its menu renames, exports or deletes it.

import { h, icon, iconButton, formatCost, relativeDay, nameNode, nameText, visibleName } from "./dom.js";
import { py } from "./bridge.js";

export class SessionList {
  constructor({ root, search, onOpen, onRename, onExport, onDelete }) {
    this.root = root;
    this.search = search;
    this.onOpen = onOpen;
    this.onRename = onRename;
    this.onExport = onExport;
    this.onDelete = onDelete;
    this.currentId = null;
    this.sessions = [];
    this.seq = 0;
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.refresh(), 80);
    });
    search.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown") {
        event.preventDefault();
        this.root.querySelector(".session-open")?.focus();
      }
    });
    root.addEventListener("keydown", (event) => this.keydown(event));
    document.addEventListener("click", (event) => {
      if (!(/** @type {Element} */ (event.target).closest?.(".row-menu, .row-menu-btn"))) this.closeMenus();
    });
  }

  async refresh() {
    const mine = ++this.seq;
    const result = await py("list_sessions", { query: this.search.value });
    if (mine !== this.seq) return;
    this.sessions = result.sessions;
    this.render();
  }

  setCurrent(id) {
    this.currentId = id;
    for (const row of this.root.querySelectorAll(".session-row")) {
      const current = row.dataset.id === id;
      row.classList.toggle("current", current);
      const button = row.querySelector(".session-open");
      if (current) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
    }
  }

  render() {
    const groups = new Map();
    for (const s of this.sessions) {
      const day = relativeDay(s.updated) || "Earlier";
      if (!groups.has(day)) groups.set(day, []);
      groups.get(day).push(s);
    }
    const children = [];
    if (!this.sessions.length) {
      children.push(
        h("p", {
          class: "empty-list",
          text: this.search.value
            ? "No session matches."
            : "No saved sessions yet. They appear here after the first message.",
        }),
      );
    }
    for (const [day, sessions] of groups) {
      children.push(
        h(
          "section",
          { class: "session-group", "aria-label": day },
          h("h3", { class: "group-title", text: day }),
          h("ul", { class: "sessions" }, ...sessions.map((s) => this.row(s))),
        ),
      );
    }
    this.root.replaceChildren(...children);
    this.setCurrent(this.currentId);
  }

  row(s) {
    const cost = s.usage?.cost?.total ?? 0;
    const model = s.model?.modelId ?? "";
    const meta = [`${s.messageCount} message${s.messageCount === 1 ? "" : "s"}`, cost ? formatCost(cost) : null, model]
      .filter(Boolean)
      .join(" · ");
    const open = h(
      "a",
      { href: `#/s/${encodeURIComponent(s.id)}`, class: "session-open", title: nameText(s.title || "Untitled") },
      h("span", { class: "session-title" }, nameNode(s.title || "Untitled")),
      h("span", { class: "session-meta", text: meta }),
    );
    open.addEventListener("click", () => this.onOpen(s.id));
    const menuButton = iconButton("more", `Actions for ${visibleName(s.title || "Untitled")}`, {
      class: "row-menu-btn small",
      "aria-haspopup": "menu",
      "aria-expanded": "false",
    });
    const menu = h("div", { class: "row-menu", role: "menu", hidden: true });
    const item = (label, iconName, action, danger = false) => {
      const b = h("button", { type: "button", role: "menuitem", class: danger ? "danger" : "" }, icon(iconName), label);
      b.addEventListener("click", () => {
        this.closeMenus();
        action(s);
      });
      return b;
    };
    menu.append(
      item("Rename", "edit", (x) => this.onRename(x)),
      item("Export .jsonl", "download", (x) => this.onExport(x)),
      item("Delete", "trash", (x) => this.onDelete(x), true),
    );
    menuButton.addEventListener("click", (event) => {
      event.stopPropagation();
      const opening = menu.hidden;
      this.closeMenus();
      menu.hidden = !opening;
      menuButton.setAttribute("aria-expanded", String(opening));
      if (opening) menu.querySelector("button").focus();
    });
    menu.addEventListener("keydown", (event) => {
      const items = [...menu.querySelectorAll("button")];
      const i = items.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        this.closeMenus();
        menuButton.focus();
      } else if (event.key === "ArrowDown") {
        event.preventDefault();
        items[(i + 1) % items.length].focus();
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        items[(i - 1 + items.length) % items.length].focus();
      }
    });
    return h("li", { class: "session-row", dataset: { id: s.id } }, open, menuButton, menu);
  }

  closeMenus() {
    for (const menu of this.root.querySelectorAll(".row-menu")) menu.hidden = true;
    for (const b of this.root.querySelectorAll(".row-menu-btn")) b.setAttribute("aria-expanded", "false");
  }

  keydown(event) {
    if (!event.target.classList?.contains("session-open")) return;
    const links = [...this.root.querySelectorAll(".session-open")];
    const i = links.indexOf(event.target);
    if (event.key === "ArrowDown" && i < links.length - 1) {
      event.preventDefault();
      links[i + 1].focus();
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      if (i > 0) links[i - 1].focus();
      else this.search.focus();
    }
  }
}
