// @ts-check
// The model picker: search over the built-in catalogue, custom providers' models and the offline
// demo, ranked by py_agent/app/catalog.py (exact and prefix matches on id or name first, newest
// first; "local" finds the models served on this computer); filters for thinking and vision; keyboard throughout
// (type to search, arrows to move, Enter to pick, Escape to close).

import { h, icon, formatContext, formatPrice } from "./dom.js";
import { createDialog, showModal } from "./dialogs.js";
import { py } from "./bridge.js";

export async function pickModel(current) {
  const { dialog, body } = createDialog({ title: "Choose a model", className: "model-dialog" });
  const search = h("input", {
    type: "search",
    class: "input",
    id: "model-search",
    placeholder: "Search models (e.g. sonnet, gpt 5, local)",
    "aria-label": "Search models",
    role: "combobox",
    "aria-expanded": "true",
    "aria-controls": "model-list",
    "aria-autocomplete": "list",
    autocomplete: "off",
    spellcheck: "false",
  });
  const thinking = h(
    "button",
    { type: "button", class: "chip-toggle", "aria-pressed": "false" },
    icon("brain"),
    "Thinking",
  );
  const vision = h("button", { type: "button", class: "chip-toggle", "aria-pressed": "false" }, icon("eye"), "Vision");
  const count = h("span", { class: "muted small", role: "status" });
  const list = h("ul", { class: "model-list", id: "model-list", role: "listbox", "aria-label": "Models" });
  body.append(
    h("div", { class: "model-search" }, icon("search", "icon search-icon"), search),
    h("div", { class: "filters" }, thinking, vision, count),
    list,
  );

  let models = [];
  let active = 0;
  let chosen = null;
  let seq = 0;

  const select = (model) => {
    chosen = model;
    dialog.close("ok");
  };

  function setActive(index) {
    const rows = list.querySelectorAll("[role=option]");
    if (!rows.length) {
      search.removeAttribute("aria-activedescendant");
      return;
    }
    active = Math.max(0, Math.min(index, rows.length - 1));
    rows.forEach((row, i) => {
      row.classList.toggle("active", i === active);
    });
    const row = rows[active];
    search.setAttribute("aria-activedescendant", row.id);
    row.scrollIntoView({ block: "nearest" });
  }

  function render() {
    list.replaceChildren(
      ...models.map((m, i) => {
        const isCurrent = current && m.provider === current.provider && m.id === current.id;
        const keyState = !m.requiresKey ? "No key needed" : m.hasKey ? "Key saved" : "Needs a key";
        const row = h(
          "li",
          {
            id: `model-option-${i}`,
            role: "option",
            class: `model-row ${isCurrent ? "current" : ""}`,
            "aria-selected": isCurrent ? "true" : "false",
            dataset: { provider: m.provider, id: m.id },
          },
          h(
            "div",
            { class: "model-main" },
            h("span", { class: "model-name", text: m.name }),
            h("span", { class: `badge ${m.demo ? "demo" : ""}`, text: m.providerLabel }),
            isCurrent
              ? h("span", { class: "current-mark", role: "img", "aria-label": "current model" }, icon("check"))
              : null,
          ),
          h(
            "div",
            { class: "model-meta" },
            h("span", { class: "mono", text: m.id }),
            m.reasoning ? h("span", { class: "cap", title: "Can think (reasoning)" }, icon("brain")) : null,
            m.vision ? h("span", { class: "cap", title: "Reads images" }, icon("eye")) : null,
            m.contextWindow ? h("span", { text: `${formatContext(m.contextWindow)} context` }) : null,
            h("span", { text: m.demo ? "Offline" : m.local ? "On this computer" : formatPrice(m.cost) }),
            h("span", { class: `key-state ${m.requiresKey && !m.hasKey ? "missing" : ""}`, text: keyState }),
          ),
        );
        row.addEventListener("click", () => select(m));
        row.addEventListener("mousemove", () => {
          if (active !== i) setActive(i);
        });
        return row;
      }),
    );
    count.textContent = models.length ? `${models.length} model${models.length === 1 ? "" : "s"}` : "No model matches";
    setActive(0);
  }

  async function refresh() {
    const mine = ++seq;
    const query = search.value;
    const result = await py("search_models", {
      query,
      reasoning: thinking.getAttribute("aria-pressed") === "true",
      vision: vision.getAttribute("aria-pressed") === "true",
    });
    if (mine !== seq) return;
    models = result.models;
    render();
    list.dataset.query = query; // what the list shows (tests wait for it)
  }

  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 40);
  });
  for (const toggle of [thinking, vision]) {
    toggle.addEventListener("click", () => {
      toggle.setAttribute("aria-pressed", String(toggle.getAttribute("aria-pressed") !== "true"));
      refresh();
    });
  }
  search.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      setActive(active + 1);
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      setActive(active - 1);
    } else if (event.key === "PageDown") {
      event.preventDefault();
      setActive(active + 8);
    } else if (event.key === "PageUp") {
      event.preventDefault();
      setActive(active - 8);
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (models[active]) select(models[active]);
    } else if (event.key === "Escape") {
      // A search field would only clear itself: close the picker at once.
      event.preventDefault();
      dialog.close("cancel");
    }
  });

  const closed = showModal(dialog);
  search.focus();
  await refresh();
  await closed;
  dialog.remove();
  return chosen;
}
