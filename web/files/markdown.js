// @ts-check
// A small Markdown to HTML converter for the workspace preview. Its output is only ever shown
// inside the sandboxed preview frame (preview.html), never inserted into the page; it escapes
// all HTML in the source anyway and keeps only http(s), mailto, relative and #fragment links.

/** @type {Record<string, string>} */
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
/**
 * @param {unknown} text
 * @returns {string}
 */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * @param {string} url
 * @returns {string | null} the URL, or null when its scheme is not one kept
 */
function safeUrl(url) {
  const trimmed = url.trim();
  if (/^(https?:|mailto:)/i.test(trimmed) || /^[#./]/.test(trimmed) || !/^[a-z][a-z0-9+.-]*:/i.test(trimmed)) {
    return trimmed;
  }
  return null;
}

/**
 * @param {string} text
 * @returns {string}
 */
function inline(text) {
  // Code spans first, kept aside so nothing inside them is formatted. Their places are marked with
  // NULs, so the text's own NULs become U+FFFD first (as CommonMark has it).
  /** @type {string[]} */
  const codes = [];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the text's NULs, replaced
  let out = text.replace(/\u0000/g, "\uFFFD").replace(/`([^`]+)`/g, (_, code) => {
    codes.push(`<code>${escapeHtml(code)}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  out = escapeHtml(out);
  out = out.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (_, alt, src) => {
    const url = safeUrl(src.replace(/&amp;/g, "&"));
    return url ? `<img alt="${alt}" src="${escapeHtml(url)}">` : alt;
  });
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, href) => {
    const url = safeUrl(href.replace(/&amp;/g, "&"));
    return url ? `<a href="${escapeHtml(url)}" rel="noopener noreferrer">${label}</a>` : label;
  });
  out = out
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/__([^_]+)__/g, "<strong>$1</strong>")
    .replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>")
    .replace(/(^|\W)_([^_\s][^_]*)_(?=\W|$)/g, "$1<em>$2</em>")
    .replace(/~~([^~]+)~~/g, "<del>$1</del>");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL marks where a code span set aside above goes back
  return out.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
}

/**
 * @param {string} line
 * @returns {string[]}
 */
function tableRow(line) {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/**
 * Markdown source -> an HTML fragment (escaped).
 * @param {unknown} source
 * @returns {string}
 */
export function markdownToHtml(source) {
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  /** @type {string[]} */
  const html = [];
  /** @type {string[]} */
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length) html.push(`<p>${inline(paragraph.join(" "))}</p>`);
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)/);
    if (fence) {
      endParagraph();
      /** @type {string[]} */
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      const lang = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : "";
      html.push(`<pre><code${lang}>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      endParagraph();
      html.push(`<h${heading[1].length}>${inline(heading[2])}</h${heading[1].length}>`);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      endParagraph();
      html.push("<hr>");
      continue;
    }
    if (/^\s*>/.test(line)) {
      endParagraph();
      /** @type {string[]} */
      const quoted = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) quoted.push(lines[i].replace(/^\s*>\s?/, ""));
      i--;
      html.push(`<blockquote>${markdownToHtml(quoted.join("\n"))}</blockquote>`);
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      endParagraph();
      const ordered = /\d/.test(item[1]);
      /** @type {string[]} */
      const items = [];
      for (; i < lines.length; i++) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (m && /\d/.test(m[1]) === ordered) items.push(m[2]);
        else if (lines[i].trim() && /^\s{2,}/.test(lines[i]) && items.length)
          items[items.length - 1] += ` ${lines[i].trim()}`;
        else break;
      }
      i--;
      const tag = ordered ? "ol" : "ul";
      const rendered = items.map((text) => {
        const task = text.match(/^\[([ xX])\]\s+(.*)$/);
        return task
          ? `<li><input type="checkbox" disabled${task[1] === " " ? "" : " checked"}> ${inline(task[2])}</li>`
          : `<li>${inline(text)}</li>`;
      });
      html.push(`<${tag}>${rendered.join("")}</${tag}>`);
      continue;
    }
    if (
      line.includes("|") &&
      i + 1 < lines.length &&
      /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[i + 1])
    ) {
      endParagraph();
      const head = tableRow(line);
      /** @type {string[][]} */
      const rows = [];
      for (i += 2; i < lines.length && lines[i].includes("|") && lines[i].trim(); i++) rows.push(tableRow(lines[i]));
      i--;
      html.push(
        `<table><thead><tr>${head.map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead><tbody>` +
          rows.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("") +
          "</tbody></table>",
      );
      continue;
    }
    if (!line.trim()) {
      endParagraph();
      continue;
    }
    paragraph.push(line.trim());
  }
  endParagraph();
  return html.join("\n");
}
