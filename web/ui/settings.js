// @ts-check
// Settings: API keys (set, replace, test, delete, forget all), custom providers (OpenAI-compatible
// servers, local or remote, with model discovery), chat defaults, storage and versions.

import { h, icon, formatTokens } from "./dom.js";
import { createDialog, showModal, confirmDialog } from "./dialogs.js";
import { askForKey } from "./key-dialog.js";
import { py } from "./bridge.js";
import { storageStatus, requestPersistence } from "./storage-status.js";
import { pluginSettingsTabs } from "./extensions.js";
import { providerTransfer } from "./provider-transfer.js";

/**
 * A settings tab's panel; `_render` draws it again (a tab's `rerender`).
 * @typedef {HTMLElement & { _render?: () => unknown }} SettingsPanel
 */

/**
 * @param {{ tab?: string, app?: any }} [options] the tab shown first; the app (web/app.js: its
 *   settings, versions and theme)
 */
export async function openSettings({ tab = "keys", app } = {}) {
  const { dialog, body } = createDialog({ title: "Settings", className: "settings-dialog" });
  const tabs = [
    ["keys", "API keys", renderKeys],
    ["providers", "Custom providers", renderProviders],
    ["tools", "Tools", renderTools],
    ...pluginSettingsTabs(), // e.g. "Agents" (web/ui/agents-settings.js)
    ["chat", "Chat", renderChat],
    ["storage", "Storage", renderStorage],
    ["about", "About", renderAbout],
  ];
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "Settings sections" });
  const panels = h("div", { class: "tab-panels" });
  const buttons = [];
  for (const [id, label, render] of tabs) {
    const button = h("button", {
      type: "button",
      role: "tab",
      id: `settings-tab-${id}`,
      "aria-controls": `settings-panel-${id}`,
      "aria-selected": "false",
      tabindex: "-1",
      text: label,
    });
    /** @type {SettingsPanel} */
    const panel = h("section", {
      role: "tabpanel",
      id: `settings-panel-${id}`,
      "aria-labelledby": `settings-tab-${id}`,
      class: "tab-panel",
      tabindex: "0", // a panel without a control (About) is still reached, and scrolled, by the keyboard
      hidden: true,
    });
    button.addEventListener("click", () => select(id));
    buttons.push(button);
    tablist.append(button);
    panels.append(panel);
    panel._render = () => render(panel, { app, rerender: () => panel._render() });
  }
  tablist.addEventListener("keydown", (event) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    let next = null;
    if (event.key === "ArrowRight" || event.key === "ArrowDown") next = (i + 1) % buttons.length;
    if (event.key === "ArrowLeft" || event.key === "ArrowUp") next = (i - 1 + buttons.length) % buttons.length;
    if (next !== null) {
      event.preventDefault();
      select(tabs[next][0]);
      buttons[next].focus();
    }
  });
  function select(id) {
    tabs.forEach(([tid], i) => {
      const on = tid === id;
      buttons[i].setAttribute("aria-selected", String(on));
      buttons[i].tabIndex = on ? 0 : -1;
      const panel = /** @type {SettingsPanel} */ (panels.children[i]);
      panel.hidden = !on;
      if (on) panel._render();
      if (on) buttons[i].scrollIntoView({ block: "nearest", inline: "nearest" }); // a phone's tab strip scrolls
    });
  }
  body.append(h("div", { class: "settings" }, tablist, panels));
  select(tab);
  const closed = showModal(dialog);
  buttons[tabs.findIndex(([id]) => id === tab)].focus();
  await closed;
  dialog.remove();
}

// ---- keys ----

async function renderKeys(panel, { rerender }) {
  const status = await py("key_status");
  const places = new Map(status.keys.map((k) => [k.provider, k.place]));
  const rows = status.providers
    .filter((p) => p.requiresKey)
    .map((p) => {
      const place = places.get(p.provider);
      const state = place === "device" ? "Saved on this device" : place === "tab" ? "For this tab only" : "No key";
      const actions = h("div", { class: "row-actions" });
      const set = h("button", {
        type: "button",
        class: "btn small",
        text: place ? "Replace" : "Add key",
        "aria-label": place ? `Replace the ${p.label} key` : `Add key for ${p.label}`,
      });
      set.addEventListener("click", async () => {
        if (
          await askForKey(
            { provider: p.provider, label: p.label, keyUrl: p.keyUrl, custom: p.custom },
            { confirmLabel: "Save", test: false },
          )
        )
          rerender();
      });
      actions.append(set);
      const result = h("span", { class: "test-result", role: "status" });
      if (place) {
        const test = h("button", {
          type: "button",
          class: "btn small ghost",
          text: "Test",
          "aria-label": `Test the ${p.label} key`,
        });
        test.addEventListener("click", async () => {
          test.disabled = true;
          result.textContent = "Testing…";
          try {
            const r = await py("test_key", { provider: p.provider });
            result.textContent = r.ok ? "Works" : `Failed: ${r.problem}`;
            result.className = `test-result ${r.ok ? "ok" : "bad"}`;
          } catch (error) {
            result.textContent = error.message;
          } finally {
            test.disabled = false;
          }
        });
        const del = h("button", {
          type: "button",
          class: "btn small ghost danger",
          text: "Delete",
          "aria-label": `Delete the ${p.label} key`,
        });
        del.addEventListener("click", async () => {
          if (
            await confirmDialog(`Delete the ${p.label} key from this browser?`, {
              title: "Delete key",
              confirmLabel: "Delete",
              danger: true,
            })
          ) {
            await py("delete_key", { provider: p.provider });
            rerender();
          }
        });
        actions.append(test, del);
      }
      return h(
        "li",
        { class: "key-row" },
        h(
          "div",
          { class: "key-info" },
          h("strong", { text: p.label }),
          h("span", { class: `key-place ${place ? "has" : ""}`, text: state }),
        ),
        result,
        actions,
      );
    });
  const forget = h("button", { type: "button", class: "btn danger", text: "Forget all keys" });
  forget.disabled = status.keys.length === 0;
  forget.addEventListener("click", async () => {
    if (
      await confirmDialog("Every API key is erased from this browser (this device and this tab). Your sessions stay.", {
        title: "Forget all keys",
        confirmLabel: "Forget all keys",
        danger: true,
      })
    ) {
      await py("forget_all_keys");
      rerender();
    }
  });
  panel.replaceChildren(
    h("p", {
      class: "muted",
      text: "Keys are kept in this browser only and sent only to their provider. “On this device” keys are stored in the browser's storage for this site; “this tab” keys are forgotten when the tab closes.",
    }),
    h("ul", { class: "key-list" }, ...rows),
    h("div", { class: "section-foot" }, forget),
  );
}

// ---- custom providers ----

async function renderProviders(panel, { rerender, app }) {
  // serverTypes: the form's server types, from py_agent/ai/custom.py custom_provider_types() (WIRE_APIS).
  const { providers, serverTypes } = await py("custom_providers");
  const add = h("button", { type: "button", class: "btn primary", id: "add-provider" }, icon("plus"), "Add a provider");
  add.addEventListener("click", () => panel.replaceChildren(providerForm(null, rerender, serverTypes)));
  const cards = providers.map((p) => {
    const edit = h("button", { type: "button", class: "btn small", text: "Edit", "aria-label": `Edit ${p.name}` });
    edit.addEventListener("click", () => panel.replaceChildren(providerForm(p, rerender, serverTypes)));
    const refresh = h("button", {
      type: "button",
      class: "btn small ghost",
      text: "Refresh models",
      "aria-label": `Refresh models of ${p.name}`,
    });
    const status = h("span", { class: "muted small", role: "status" });
    refresh.addEventListener("click", async () => {
      refresh.disabled = true;
      status.textContent = "Asking the server…";
      try {
        const r = await py("save_custom_provider", {
          provider: toArgs(p, serverTypes),
          original_name: p.name,
          discover: true,
        });
        status.textContent = r.needModels ? r.problem : r.warning ? r.warning : `${r.models.length} models`;
        if (!r.warning && !r.needModels) rerender();
      } catch (error) {
        status.textContent = error.message;
      } finally {
        refresh.disabled = false;
      }
    });
    const del = h("button", {
      type: "button",
      class: "btn small ghost danger",
      text: "Delete",
      "aria-label": `Delete ${p.name}`,
    });
    del.addEventListener("click", async () => {
      if (
        await confirmDialog(`Remove ${p.name} and its key? Sessions that used it stay.`, {
          title: "Delete provider",
          confirmLabel: "Delete",
          danger: true,
        })
      ) {
        await py("delete_custom_provider", { name: p.name });
        rerender();
      }
    });
    return h(
      "li",
      { class: "provider-card" },
      h("div", {}, h("strong", { text: p.name }), h("span", { class: "badge", text: p.label })),
      h("div", { class: "mono small muted", text: p.baseUrl }),
      h("div", {
        class: "small",
        text: `${p.models.length} model${p.models.length === 1 ? "" : "s"}${p.needsKey ? (p.hasKey ? " · key saved" : " · needs a key") : ""}`,
      }),
      h("div", { class: "row-actions" }, edit, refresh, del, status),
    );
  });
  const proxy = h("input", {
    class: "input mono",
    id: "proxy-url",
    type: "url",
    placeholder: "https://my-proxy.example",
    autocomplete: "off",
    spellcheck: "false",
  });
  proxy.value = app.init.settings.proxyUrl ?? "";
  const saveProxy = h("button", { type: "button", class: "btn small", text: "Save proxy" });
  const proxyNote = h("span", { class: "muted small", role: "status" });
  saveProxy.addEventListener("click", async () => {
    try {
      const r = await py("set_setting", { key: "proxyUrl", value: proxy.value.trim() });
      app.init.settings = r.settings;
      proxyNote.textContent = proxy.value.trim() ? "Saved." : "No proxy.";
    } catch (error) {
      proxyNote.textContent = error.message;
    }
  });
  panel.replaceChildren(
    h("p", {
      class: "muted",
      text: "Connect any OpenAI-compatible server: Ollama, LM Studio, llama.cpp, vLLM on this computer, or a hosted API. The page talks to it directly, so the server must allow requests from this page (CORS); the error message tells how when it does not.",
    }),
    providers.length
      ? h("ul", { class: "provider-list" }, ...cards)
      : h("p", { class: "empty-list", text: "No custom provider yet." }),
    h("div", { class: "section-foot" }, add),
    providerTransfer({ count: providers.length, rerender }),
    h(
      "details",
      { class: "proxy-box" },
      h("summary", { text: "CORS proxy (for servers that cannot allow this page)" }),
      h("p", {
        class: "muted small",
        text: "Requests of the providers marked “through the proxy” go to <proxy>/?url=<request URL>. The proxy sees those requests, including the provider's key: use only a proxy you run or trust.",
      }),
      h("label", { class: "field" }, h("span", { text: "Proxy URL" }), proxy),
      h("div", { class: "row-actions" }, saveProxy, proxyNote),
    ),
  );
}

// The server type of a saved provider: the one with its kind and API.
function typeOf(p, types) {
  return types.find((t) => t.kind === p.kind && t.api === p.api) ?? types.find((t) => t.kind === p.kind) ?? types[0];
}

function toArgs(p, types) {
  return argsFor(typeOf(p, types), {
    name: p.name,
    baseUrl: p.baseUrl,
    models: p.modelSpecs ?? p.manualModels ?? [],
    useProxy: Boolean(p.useProxy),
  });
}

// The "Describe the models" part of the provider form: per model, whether it takes images, reasons,
// its context window and its longest reply. Prefilled from what the server says (discovery) and from
// the user's own descriptions, which are saved as the provider's model specs (py_agent/ai/custom.py
// CustomModelSpec, as pi's models.json has them) and win over the server's word.
function modelDetailsEditor(existing) {
  const rows = new Map(); // id -> {vision, reasoning, contextWindow, maxTokens, described}
  const specs = new Map((existing?.modelSpecs ?? []).map((spec) => [spec.id, spec]));
  const put = (detail, described = false) => {
    const row = rows.get(detail.id);
    if (row?.described) return;
    rows.set(detail.id, { ...detail, described });
  };
  for (const detail of existing?.modelDetails ?? [])
    put(detail, specs.has(detail.id) && Object.keys(specs.get(detail.id)).length > 1);
  const list = h("div", { class: "model-details-list" });
  const box = h(
    "details",
    { class: "model-details" },
    h("summary", { text: "Describe the models (images, context window, reasoning)" }),
    h("p", {
      class: "muted small",
      text: "Filled in from what the server says where it says it. A model marked as taking images gets your attached images; the context window sets when a long conversation is compacted.",
    }),
    list,
  );
  const render = () => {
    list.replaceChildren(
      ...[...rows.values()].map((row) => {
        const id = `model-${[...rows.keys()].indexOf(row.id)}`;
        const check = (field, label) => {
          const input = h("input", { type: "checkbox", id: `${id}-${field}` });
          input.checked = Boolean(row[field]);
          input.addEventListener("change", () => {
            row[field] = input.checked;
            row.described = true;
          });
          return h("label", { class: "check" }, input, h("span", { text: label }));
        };
        const number = (field, label) => {
          const input = h("input", {
            class: "input mono",
            type: "number",
            min: "1",
            step: "1",
            inputmode: "numeric",
            id: `${id}-${field}`,
          });
          input.value = row[field] ? String(row[field]) : "";
          input.addEventListener("change", () => {
            const value = Number.parseInt(input.value, 10);
            row[field] = Number.isFinite(value) && value > 0 ? value : null;
            row.described = true;
          });
          return h("label", { class: "field" }, h("span", { text: label }), input);
        };
        return h(
          "fieldset",
          { class: "model-detail" },
          h("legend", { class: "mono", text: row.id }),
          check("vision", "Takes images"),
          check("reasoning", "Reasons (thinking)"),
          number("contextWindow", "Context window (tokens)"),
          number("maxTokens", "Max output (tokens)"),
        );
      }),
    );
    box.hidden = rows.size === 0;
  };
  render();
  return {
    element: box,
    /** Models the server listed (discovery), each described as the server says unless the user did. */
    addDiscovered(details) {
      for (const detail of details ?? []) put(detail);
      render();
    },
    /** Model ids typed by hand: a row each (text only, sizes unknown, until described). */
    addTyped(ids) {
      // The field's ids as they are now: a row typed and left undescribed goes when its id is gone.
      for (const [id, row] of rows) if (row.typed && !row.described && !ids.includes(id)) rows.delete(id);
      for (const id of ids)
        if (!rows.has(id))
          rows.set(id, { id, vision: false, reasoning: false, contextWindow: null, maxTokens: null, typed: true });
      render();
    },
    /** The model specs to save: every typed id, and every model the user described. */
    specs(typedIds) {
      const out = [];
      for (const row of rows.values()) {
        if (!row.described) {
          if (typedIds.includes(row.id)) out.push(row.id);
          continue;
        }
        const spec = {
          id: row.id,
          input: row.vision ? ["text", "image"] : ["text"],
          reasoning: Boolean(row.reasoning),
        };
        if (row.contextWindow) spec.contextWindow = row.contextWindow;
        if (row.maxTokens) spec.maxTokens = row.maxTokens;
        out.push(spec);
      }
      for (const id of typedIds) if (!rows.has(id)) out.push(id);
      return out;
    },
  };
}

function argsFor(type, { name, baseUrl, models, useProxy = false }) {
  return { name, baseUrl, kind: type.kind, api: type.api, models, useProxy };
}

function providerForm(existing, done, types) {
  const defaults = Object.fromEntries(types.filter((t) => t.defaultBaseUrl).map((t) => [t.value, t.defaultBaseUrl]));
  const kindValue = existing ? typeOf(existing, types).value : types[0].value;
  const kind = h(
    "select",
    { class: "input", id: "provider-kind" },
    ...types.map((t) => h("option", { value: t.value, text: t.label })),
  );
  kind.value = kindValue;
  const selected = () => types.find((t) => t.value === kind.value) ?? types[0];
  const name = h("input", {
    class: "input",
    id: "provider-name",
    type: "text",
    required: true,
    placeholder: "e.g. My Ollama",
    autocomplete: "off",
  });
  name.value = existing?.name ?? "";
  const url = h("input", {
    class: "input mono",
    id: "provider-url",
    type: "url",
    required: true,
    placeholder: "http://localhost:11434",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "provider-url-problem",
  });
  url.value = existing?.baseUrl ?? selected().defaultBaseUrl;
  // Checked where it is typed (py_agent/app/network.py check_base_url): the reason, never a guess.
  const urlProblem = h("p", {
    class: "form-error field-problem",
    id: "provider-url-problem",
    role: "alert",
    hidden: true,
  });
  const checkUrl = async () => {
    const value = url.value.trim();
    if (!value) {
      url.removeAttribute("aria-invalid");
      urlProblem.hidden = true;
      return false;
    }
    const r = await py("check_base_url", { url: value, use_proxy: viaProxy.checked });
    if (url.value.trim() !== value) return r.ok; // typed on meanwhile
    if (r.ok) url.removeAttribute("aria-invalid");
    else url.setAttribute("aria-invalid", "true");
    urlProblem.textContent = r.ok ? "" : r.problem;
    urlProblem.hidden = r.ok;
    return r.ok;
  };
  url.addEventListener("change", checkUrl);
  const key = h("input", {
    class: "input mono",
    id: "provider-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: existing?.hasKey ? "(key saved — leave empty to keep it)" : "optional",
  });
  const models = h("input", {
    class: "input mono",
    id: "provider-models",
    type: "text",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "model ids, comma-separated (optional if the server lists them)",
    "aria-describedby": "provider-models-note",
  });
  models.value = (existing?.manualModels ?? []).join(", ");
  const describe = modelDetailsEditor(existing);
  const typedIds = () =>
    models.value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  // As it is typed, not on blur: a row appearing when the field loses focus would move the Save button
  // from under the click that blurred it.
  models.addEventListener("input", () => describe.addTyped(typedIds()));
  const viaProxy = h("input", { type: "checkbox", id: "provider-proxy" });
  viaProxy.checked = Boolean(existing?.useProxy);
  viaProxy.addEventListener("change", () => url.value.trim() && checkUrl());
  kind.addEventListener("change", () => {
    if (defaults[kind.value] && (!url.value || Object.values(defaults).includes(url.value)))
      url.value = defaults[kind.value];
    if (!defaults[kind.value] && Object.values(defaults).includes(url.value)) url.value = "";
    showFields();
  });
  const out = h("div", { class: "discovery", role: "status", "aria-live": "polite" });
  const test = h("button", { type: "button", class: "btn", text: "Test connection" });
  const cancel = h("button", { type: "button", class: "btn ghost", text: "Cancel" });
  const save = h("button", { type: "submit", class: "btn primary", text: "Save provider" });
  const args = () =>
    argsFor(selected(), {
      name: name.value.trim(),
      baseUrl: url.value.trim(),
      models: describe.specs(typedIds()),
      useProxy: viaProxy.checked,
    });
  test.addEventListener("click", async () => {
    if (!(await checkUrl())) {
      url.focus();
      return;
    }
    test.disabled = true;
    out.className = "discovery";
    out.textContent = "Asking the server for its models…";
    try {
      const r = await py("discover", { provider: { ...args(), name: args().name || "test" }, key: key.value });
      if (r.ok) {
        describe.addDiscovered(r.modelDetails);
        out.className = "discovery ok";
        const shown = r.models.slice(0, 8).join(", ");
        out.textContent = r.models.length
          ? `Found ${r.models.length} model${r.models.length === 1 ? "" : "s"}: ${shown}${r.models.length > 8 ? ", …" : ""}`
          : "Connected, but the server lists no model: type the model ids to use in Models.";
      } else {
        out.className = "discovery bad";
        out.textContent = r.problem;
      }
    } catch (error) {
      out.className = "discovery bad";
      out.textContent = error.message;
    } finally {
      test.disabled = false;
    }
  });
  cancel.addEventListener("click", () => done());
  // One row per form field a server type may show (its "fields" list says which it does).
  const fields = {
    name: h("label", { class: "field" }, h("span", { text: "Name" }), name),
    baseUrl: h("div", { class: "field" }, h("label", { for: "provider-url", text: "Base URL" }), url, urlProblem),
    apiKey: h("label", { class: "field" }, h("span", { text: "API key (optional)" }), key),
    models: h(
      "div",
      { class: "field" },
      h("label", { for: "provider-models", text: "Models" }),
      models,
      h("p", {
        class: "muted small",
        id: "provider-models-note",
        text: "Needed when the server does not list its models.",
      }),
    ),
    useProxy: h(
      "label",
      { class: "check" },
      viaProxy,
      h("span", { text: "Send this provider's requests through the CORS proxy (set below the list)" }),
    ),
  };
  const showFields = () => {
    const type = selected();
    for (const [field, row] of Object.entries(fields)) row.hidden = !type.fields.includes(field);
    url.placeholder = type.placeholder || url.placeholder;
  };
  showFields();
  const form = h(
    "form",
    { class: "stack provider-form", novalidate: true },
    h("h3", { text: existing ? `Edit ${existing.name}` : "Add a provider" }),
    h("label", { class: "field" }, h("span", { text: "Server type" }), kind),
    ...Object.values(fields),
    describe.element,
    out,
    h("div", { class: "dialog-actions" }, test, h("span", { class: "spacer" }), cancel, save),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const a = args();
    if (!a.name || !a.baseUrl) {
      out.className = "discovery bad";
      out.textContent = "A name and a base URL are needed.";
      (a.name ? url : name).focus();
      return;
    }
    if (!(await checkUrl())) {
      url.focus();
      return;
    }
    save.disabled = true;
    out.className = "discovery";
    out.textContent = "Saving and asking the server for its models…";
    try {
      const r = await py("save_custom_provider", {
        provider: a,
        key: key.value,
        original_name: existing?.name ?? null,
        discover: true,
      });
      if (r.needModels) {
        // Nothing to pick from: not saved; the model ids are asked for instead.
        out.className = "discovery bad";
        out.textContent = r.problem;
        fields.models.hidden = false;
        models.setAttribute("aria-invalid", "true");
        models.focus();
        return;
      }
      models.removeAttribute("aria-invalid");
      key.value = "";
      if (r.warning) {
        out.className = "discovery bad";
        out.textContent = `Saved, but the models could not be listed: ${r.warning}`;
        const back = h("button", { type: "button", class: "btn", text: "Back to the list" });
        back.addEventListener("click", () => done());
        out.append(h("div", {}, back));
      } else done();
    } catch (error) {
      out.className = "discovery bad";
      out.textContent = error.message;
    } finally {
      save.disabled = false;
    }
  });
  setTimeout(() => (existing ? name : kind).focus(), 0);
  return form;
}

// ---- tools ----

async function renderTools(panel, { rerender }) {
  const { settings: loaded, tools } = await py("tool_settings");
  // Every change updates this one copy at once and saves it in order, so a quick second change
  // builds on the first instead of on what was loaded.
  let settings = loaded;
  const disabled = new Set(settings.disabled_tools);
  let saving = Promise.resolve();
  const save = (next) => {
    settings = { ...next, disabled_tools: [...disabled] };
    const snapshot = settings;
    saving = saving.then(() => py("set_tool_settings", { settings: snapshot })).catch(() => {});
    saving.then(() => {
      if (settings === snapshot) rerender();
    });
    return saving;
  };
  const rows = tools.map((name) => {
    const box = h("input", { type: "checkbox", id: `tool-${name}` });
    box.checked = !disabled.has(name);
    box.addEventListener("change", () => {
      if (box.checked) disabled.delete(name);
      else disabled.add(name);
      save(settings);
    });
    return h("li", {}, h("label", { class: "check" }, box, h("span", { class: "mono", text: name })));
  });
  const sandboxRow = (tool, label) => {
    const net = h("input", { type: "checkbox", id: `${tool}-network` });
    net.checked = Boolean(settings[`${tool}_network`]);
    net.addEventListener("change", () => save({ ...settings, [`${tool}_network`]: net.checked }));
    const timeout = h("input", {
      type: "number",
      class: "input",
      id: `${tool}-timeout`,
      min: "1",
      max: "3600",
      step: "1",
      "aria-label": `${label} time limit in seconds`,
    });
    timeout.value = String(Math.round(settings[`${tool}_timeout_ms`] / 1000));
    timeout.addEventListener("change", () =>
      save({ ...settings, [`${tool}_timeout_ms`]: Math.round(Number(timeout.value) * 1000) }),
    );
    return h(
      "div",
      { class: "tool-setting" },
      h("strong", { text: label }),
      h("label", { class: "check" }, net, h("span", { text: "Allow network access" })),
      h("label", { class: "field inline" }, h("span", { text: "Time limit (seconds)" }), timeout),
    );
  };
  panel.replaceChildren(
    h("p", {
      class: "muted",
      text: "The tools the model may use in your sessions. Code runs in sandboxes that cannot reach this page, its storage or your keys; the network is off unless you allow it.",
    }),
    tools.length
      ? h("ul", { class: "tool-list" }, ...rows)
      : h("p", { class: "empty-list", text: "No tool is enabled in this build." }),
    tools.includes("javascript") || disabled.has("javascript") ? sandboxRow("javascript", "JavaScript") : null,
    tools.includes("python") || disabled.has("python") ? sandboxRow("python", "Python") : null,
  );
}

// ---- chat ----

async function renderChat(panel, { app }) {
  const init = app.init;
  const prompt = h("textarea", { class: "input", id: "default-system-prompt", rows: "6" });
  prompt.value = init.settings.systemPrompt ?? init.defaultSystemPrompt;
  const saveDefault = h("button", { type: "button", class: "btn", text: "Save as default for new sessions" });
  const applyHere = h("button", { type: "button", class: "btn ghost", text: "Use in this session too" });
  const note = h("span", { class: "muted small", role: "status" });
  saveDefault.addEventListener("click", async () => {
    await py("set_setting", { key: "systemPrompt", value: prompt.value });
    init.settings.systemPrompt = prompt.value;
    note.textContent = "Saved.";
  });
  applyHere.addEventListener("click", async () => {
    await py("set_system_prompt", { prompt: prompt.value });
    note.textContent = "This session now uses it (saved with the session).";
  });
  const theme = h(
    "select",
    { class: "input", id: "theme-select" },
    h("option", { value: "system", text: "Follow the system" }),
    h("option", { value: "light", text: "Light" }),
    h("option", { value: "dark", text: "Dark" }),
  );
  theme.value = init.settings.theme ?? "system";
  theme.addEventListener("change", async () => {
    app.applyTheme(theme.value);
    await py("set_setting", { key: "theme", value: theme.value });
    init.settings.theme = theme.value;
  });
  panel.replaceChildren(
    h("label", { class: "field" }, h("span", { text: "System prompt" }), prompt),
    h("div", { class: "row-actions" }, saveDefault, applyHere, note),
    h("p", {
      class: "muted small",
      text: "Each session keeps the system prompt it was started with; changing it here applies to new sessions.",
    }),
    h("label", { class: "field" }, h("span", { text: "Theme" }), theme),
    stallTimeoutField(init), // py_agent/app/reliability.py
  );
}

// How long a reply may send nothing before it is ended as stalled (py_agent/app/reliability.py).
function stallTimeoutField(init) {
  const input = h("input", {
    class: "input",
    id: "idle-timeout",
    type: "number",
    min: "0",
    max: "3600",
    step: "0.5",
    inputmode: "decimal",
  });
  const ms = init.settings.idleTimeoutMs;
  input.value = String(typeof ms === "number" ? ms / 1000 : 120);
  const note = h("span", { class: "muted small", role: "status", id: "idle-timeout-note" });
  input.addEventListener("change", async () => {
    try {
      const r = await py("set_setting", { key: "idleTimeoutMs", value: Math.round(Number(input.value) * 1000) });
      init.settings = r.settings;
      note.textContent = Number(input.value) ? "Saved." : "Saved: no stall timeout.";
    } catch (error) {
      note.textContent = error.message;
    }
  });
  return h(
    "div",
    { class: "field" },
    h("label", { for: "idle-timeout", text: "Stall timeout (seconds)" }),
    input,
    h("p", {
      class: "muted small",
      text: "A reply that sends nothing for this long is stopped with an error you can retry (0: wait forever).",
    }),
    note,
  );
}

// ---- storage ----

async function renderStorage(panel, { rerender }) {
  const status = await storageStatus();
  const state = status.persisted
    ? "Persistent: the browser will not clear your sessions to make room."
    : "Best effort: the browser may clear stored sessions when the disk runs low. Export the sessions you want to keep.";
  const ask = h("button", { type: "button", class: "btn", text: "Ask for persistent storage" });
  ask.hidden = status.persisted || !status.supported;
  ask.addEventListener("click", async () => {
    await requestPersistence({ announceResult: true });
    rerender();
  });
  const usage = status.quota
    ? `${(status.usage / 1e6).toFixed(1)} MB used of about ${(status.quota / 1e6).toFixed(0)} MB available to this site.`
    : "The browser does not report storage usage.";
  panel.replaceChildren(
    h("p", {}, h("strong", { text: "Storage: " }), state),
    h("p", { class: "muted", text: usage }),
    h("div", { class: "row-actions" }, ask),
    h("p", {
      class: "muted small",
      text: "Sessions, settings and keys saved “on this device” live in this browser's storage for this site (IndexedDB). Nothing is sent anywhere except your messages to the provider you chose.",
    }),
  );
}

// ---- about ----

function renderAbout(panel, { app }) {
  const v = app.versions ?? {};
  panel.replaceChildren(
    h("p", {
      text: "py-agent is pi's agent core rebuilt in Python, running in this page on Pyodide. Conversations and keys stay in this browser; replies come straight from the provider you choose.",
    }),
    h(
      "dl",
      { class: "versions" },
      ...[
        ["py_agent", v.py_agent],
        ["Python", v.python],
        ["Pyodide", v.pyodide],
        ["pydantic", v.pydantic],
      ].map(([k, val]) => h("div", {}, h("dt", { text: k }), h("dd", { text: val ?? "?" }))),
    ),
    h("p", {
      class: "muted small",
      text: `Session format: pi v3 (.jsonl). Tokens are counted as the provider reports them (${formatTokens(1234)} = 1,234).`,
    }),
    ...browserLimits(),
  );
}

// What this browser lacks, said plainly; the rest of the app works without it.
function browserLimits() {
  const missing = [];
  if (!("serviceWorker" in navigator) || document.documentElement.dataset.offline === "unsupported") {
    missing.push("offline use (this browser gives the page no service worker)");
  }
  if (typeof window.showDirectoryPicker !== "function") {
    missing.push(
      "opening a folder on your disk (the File System Access API): upload a folder and download a zip instead",
    );
  }
  if (!missing.length) return [];
  return [
    h("p", {
      class: "muted small",
      id: "browser-limits",
      text: `Not available in this browser: ${missing.join("; ")}. Everything else works.`,
    }),
  ];
}
