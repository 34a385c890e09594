// Markdown for model output: marked (GFM) -> DOMPurify (allow-list) -> highlight.js, all vendored
// from npm by build.py. Whatever a reply contains (raw HTML, SVG, event handlers, `javascript:`
// links), only inert markup reaches the page:
// - raw HTML is sanitized by DOMPurify with the HTML profile only (no SVG, no MathML), without
//   forms, frames, styles or images;
// - links keep only absolute http(s) and mailto URLs and open in a new tab without an opener;
// - images are never loaded (they could leak the conversation through their URL): they become
//   links that the user can choose to open.
// Code is highlighted from its text (highlight.js escapes it), never from HTML.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.js";
import hljs from "../vendor/highlight.min.js";
import { h, icon, copyText, scrollRegion } from "./dom.js";

const SAFE_URL = /^(?:https?:|mailto:)/i;

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    image({ href, text }) {
      const label = text || "image";
      if (!href || !SAFE_URL.test(href)) return escapeHtml(`[${label}]`);
      return `<a href="${escapeAttr(href)}" class="md-image-link">[image: ${escapeHtml(label)}]</a>`;
    },
  },
});

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function escapeAttr(text) {
  return escapeHtml(text);
}

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "style", "script", "form", "input", "button", "textarea", "select", "option", "iframe", "frame",
    "frameset", "object", "embed", "link", "meta", "base", "img", "picture", "source", "video",
    "audio", "track", "svg", "math", "template", "dialog", "noscript",
  ],
  FORBID_ATTR: ["style", "srcset", "formaction", "action", "background", "poster", "ping", "target"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: true,
  RETURN_DOM_FRAGMENT: true,
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (!SAFE_URL.test(href.trim())) node.removeAttribute("href");
    else {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer nofollow");
      node.setAttribute("referrerpolicy", "no-referrer");
    }
  }
  // Only a code block's language class is kept (for highlighting); ids could clash with the app's.
  if (node.hasAttribute?.("id")) node.removeAttribute("id");
  if (node.hasAttribute?.("class") && !(node.nodeName === "CODE" && /^language-[\w+#.-]+$/.test(node.getAttribute("class")))) {
    node.removeAttribute("class");
  }
});

const HIGHLIGHT_LIMIT = 60_000;

function decorateCode(fragment, { highlight }) {
  for (const code of fragment.querySelectorAll("pre > code")) {
    const pre = code.parentElement;
    const match = /language-([\w+#.-]+)/.exec(code.className);
    const language = match ? match[1].toLowerCase() : "";
    if (highlight && code.textContent.length < HIGHLIGHT_LIMIT) {
      const known = language && hljs.getLanguage(language);
      const result = known
        ? hljs.highlight(code.textContent, { language, ignoreIllegals: true })
        : code.textContent.length < 4000
          ? hljs.highlightAuto(code.textContent)
          : null;
      if (result) {
        // highlight.js escapes the code itself: its output is spans with hljs-* classes only.
        code.innerHTML = result.value;
        code.classList.add("hljs");
      }
    }
    const copy = h("button", { type: "button", class: "code-copy", "aria-label": "Copy code", title: "Copy code" }, icon("copy"), icon("check", "icon done"));
    copy.addEventListener("click", () => copyText(code.textContent, copy));
    const bar = h("div", { class: "code-bar" }, h("span", { class: "code-lang", text: language || "text" }), copy);
    const wrapper = h("div", { class: "code-block" }, bar);
    pre.replaceWith(wrapper);
    for (const [name, value] of Object.entries(scrollRegion(language ? `${language} code` : "Code"))) pre.setAttribute(name, value);
    wrapper.append(pre);
  }
  for (const table of fragment.querySelectorAll("table")) {
    const scroll = h("div", { class: "table-scroll", ...scrollRegion("Table") });
    table.replaceWith(scroll);
    scroll.append(table);
  }
}

/** A sanitized DocumentFragment for `text` (Markdown). */
export function renderMarkdown(text, { highlight = true } = {}) {
  let html;
  try {
    html = marked.parse(String(text ?? ""), { async: false });
  } catch {
    html = `<p>${escapeHtml(text)}</p>`;
  }
  const fragment = DOMPurify.sanitize(html, PURIFY_CONFIG);
  decorateCode(fragment, { highlight });
  return fragment;
}
