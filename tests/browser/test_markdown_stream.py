"""Incremental Markdown (web/ui/markdown.js, renderMarkdownInto and appendMarkdownInto): a text
rendered as it grows gives the same DOM as rendering it whole, at every step and at the end.

The module is imported into a blank page of the site's origin (no Python: only the page's
JavaScript is under test). At each step the streamed element must equal renderMarkdown() of the
same prefix, with code highlighting set aside (finished code blocks are highlighted while the
text streams, the unfinished tail is not); at the end, once rendered as final, it must equal
renderMarkdown() of the whole text exactly, highlighting included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from web_app_helpers import open_blank_page

DOCUMENTS: dict[str, str] = {
    "prose and headings": (
        "# Title\n\nA paragraph with **bold**, *em*, `code` and a [link](https://example.com).\n"
        "It goes on for a second line.\n\n#\n\n#not a heading\n\n## Second\n\nSetext heading\n"
        "===\n\nAnother setext\n---\n\n***\n\nLast paragraph, ~~struck~~ and an autolink https://example.org.\n"
    ),
    "lists": (
        "- one\n- two\n\n- three (the list turns loose)\n\n  continued inside the item\n\n"
        "paragraph after the list\n\n1. first\n2. second\n   - nested\n   - nested too\n\n"
        "3) other delimiter\n\n- [ ] task\n- [x] done task\n\n* star list\n\n+ plus list\n\nend\n"
    ),
    "code": (
        "Some Python:\n\n```python\ndef f(x):\n\n    return x * 2\n```\n\nAnd unknown:\n\n```\nplain\n\ntext\n```\n\n"
        "Indented code:\n\n    line one\n\n    line two\n\nafter indented\n\n~~~js\nconst a = 1;\n~~~\n\n"
        "```ts\nunclosed at the end: let y = 2;\n"
    ),
    "quotes and tables": (
        "> a quote\nlazy continuation\n\n> another quote\n> > nested\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n"
        "| 3 | **4** |\n\nafter the table\n\n| lone | header |\n| --- | --- |\n\nend\n"
    ),
    "raw html": (
        "Intro paragraph.\n\n<div>\n\ninside a div, *markdown*\n\n</div>\n\nA <b>bold start\n\n"
        "still bold?\n\n<details><summary>s</summary>\n\nhidden\n\n</details>\n\n<script>x</script>\n\nend\n"
    ),
    "reference links": (
        "See [the docs][docs] and [other].\n\nMore text here.\n\n- item [docs]\n\n"
        "[docs]: https://example.com/docs\n[other]: https://example.com/other 'Title'\n\nafter the definitions\n"
    ),
    "crlf": "First line\r\nsecond line\r\n\r\n- item\r\n- item\r\n\r\n```\r\ncode\r\n```\r\n\r\nend\r\n",
}

SCRIPT = """async ([text, steps]) => {
  const { renderMarkdown, renderMarkdownInto, appendMarkdownInto } = await import("/ui/markdown.js");
  const plain = (root) => {
    const copy = root.cloneNode(true);
    for (const code of copy.querySelectorAll("pre > code")) {
      code.textContent = code.textContent;
      code.classList.remove("hljs");
      if (!code.getAttribute("class")) code.removeAttribute("class");
    }
    return copy.innerHTML;
  };
  const whole = (t, options) => {
    const el = document.createElement("div");
    el.append(renderMarkdown(t, options));
    return el;
  };
  const el = document.createElement("div");
  const added = document.createElement("div"); // fed only what each step appends (appendMarkdownInto)
  const mismatches = [];
  const appendMismatches = [];
  let kept = 0;
  let last = 0;
  for (const end of steps) {
    const prefix = text.slice(0, end);
    const before = new Set(el.childNodes);
    renderMarkdownInto(el, prefix, { streaming: true });
    appendMarkdownInto(added, prefix, text.slice(last, end), { streaming: true });
    last = end;
    kept += [...el.childNodes].filter((n) => before.has(n)).length;
    const expected = plain(whole(prefix, { highlight: false }));
    if (plain(el) !== expected) mismatches.push(end);
    if (added.innerHTML !== el.innerHTML) appendMismatches.push(end);
  }
  renderMarkdownInto(el, text, { streaming: false });
  renderMarkdownInto(added, text, { streaming: false });
  const expected = whole(text, { highlight: true }).innerHTML;
  return { mismatches, appendMismatches, kept, final: el.innerHTML, appendFinal: added.innerHTML, expected };
}"""


@pytest.fixture(scope="module")
def page(browser: Any, base_url: str) -> Iterator[Any]:
    page = open_blank_page(browser, base_url, "markdown-test.html")
    yield page
    page.context.close()


def steps_for(text: str, seed: int) -> list[int]:
    """Every end position in the first 300 characters, then irregular chunks (1 to 23 characters)."""
    steps = list(range(1, min(len(text), 300) + 1))
    end, step = steps[-1], seed
    while end < len(text):
        step = (step * 7 + 3) % 23 + 1
        end = min(len(text), end + step)
        steps.append(end)
    return steps


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_incremental_render_equals_the_whole_render(page: Any, name: str) -> None:
    text = DOCUMENTS[name]
    result = page.evaluate(SCRIPT, [text, steps_for(text, len(name))])
    assert result["mismatches"] == []
    assert result["final"] == result["expected"]
    # Fed only the appended pieces (a streaming reply's updates), the DOM is the same at every step.
    assert result["appendMismatches"] == []
    assert result["appendFinal"] == result["expected"]


def test_finished_blocks_are_kept_between_updates(page: Any) -> None:
    # Plain prose: each update keeps the paragraphs already finished instead of rendering them again.
    text = "".join(f"Paragraph {i} with *some* words in it.\n\n" for i in range(60))
    result = page.evaluate(SCRIPT, [text, list(range(10, len(text) + 1, 10))])
    assert result["mismatches"] == []
    assert result["final"] == result["expected"]
    assert result["kept"] > 1000  # finished paragraphs (and their separators) stay the same nodes


def test_a_text_that_does_not_extend_the_last_one_is_rendered_anew(page: Any) -> None:
    result = page.evaluate(
        """async () => {
          const { renderMarkdown, renderMarkdownInto } = await import("/ui/markdown.js");
          const el = document.createElement("div");
          renderMarkdownInto(el, "first paragraph\\n\\nsecond", { streaming: true });
          renderMarkdownInto(el, "another text\\n\\n```js\\nx = 1\\n```", { streaming: false });
          const expected = document.createElement("div");
          expected.append(renderMarkdown("another text\\n\\n```js\\nx = 1\\n```"));
          return [el.innerHTML, expected.innerHTML];
        }"""
    )
    assert result[0] == result[1]
    assert "first paragraph" not in result[0]
