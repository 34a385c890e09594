"""web/ui/markdown-deferred.js: a message's text is drawn as plain text (never as HTML) until the
Markdown renderer has loaded, then drawn again as Markdown, in place; and the app loads it once it
is ready (a stored reply's code block is highlighted then)."""

from __future__ import annotations

from typing import Any

from web_app_helpers import open_app, open_blank_page

DRAW = """async () => {
  const deferred = await import("/ui/markdown-deferred.js");
  const el = document.createElement("div");
  const streamed = document.createElement("div");
  const card = document.createElement("div");
  document.body.append(el, streamed, card);
  const text = "# Title\\n\\n<img src=x onerror=alert(1)> and `code`\\n\\n```js\\nlet a = 1;\\n```";
  deferred.renderMarkdownInto(el, text);
  deferred.appendMarkdownInto(streamed, "Hello **wor", "Hello **wor");
  deferred.appendMarkdownInto(streamed, "Hello **world**", "ld**");
  card.append(deferred.renderMarkdown("A *card*"));
  const before = {
    text: el.textContent, html: el.innerHTML, plain: el.classList.contains("md-plain"),
    streamed: streamed.textContent, card: card.textContent, images: document.querySelectorAll("img").length,
  };
  await deferred.loadMarkdown();
  deferred.appendMarkdownInto(streamed, "Hello **world**!", "!");
  return {
    before,
    after: {
      h1: el.querySelector("h1")?.textContent ?? null, code: !!el.querySelector("pre code.hljs"),
      plain: el.classList.contains("md-plain"), images: document.querySelectorAll("img").length,
      strong: streamed.querySelector("strong")?.textContent ?? null, streamed: streamed.textContent,
      em: card.querySelector("em")?.textContent ?? null,
    },
  };
}"""


def test_plain_text_until_loaded_then_markdown_in_place(browser: Any, base_url: str) -> None:
    page = open_blank_page(browser, base_url, "markdown-deferred-test.html")
    try:
        result = page.evaluate(DRAW)
    finally:
        page.context.close()
    before, after = result["before"], result["after"]
    # Before: the text as it is, not interpreted (no element made from it, no image loaded).
    assert before["text"].startswith("# Title") and "<img" in before["text"] and before["plain"]
    assert "<img" not in before["html"] and before["images"] == 0
    assert before["streamed"] == "Hello **world**" and before["card"] == "A *card*"
    # After: the same elements hold the rendered Markdown; the sanitizer still removed the handler.
    assert after["h1"] == "Title" and after["code"] and not after["plain"]
    assert after["strong"] == "world" and after["streamed"].strip() == "Hello world!" and after["em"] == "card", after
    assert after["images"] == 0


def test_the_app_draws_a_stored_reply_as_markdown_once_ready(browser: Any, base_url: str) -> None:
    with open_app(browser, base_url) as app:
        app.page.locator("#input").fill("Show me some code")
        app.page.locator("#input").press("Enter")
        app.page.locator("#transcript .msg.assistant:not(.streaming)").first.wait_for()
        session = app.page.evaluate("() => window.pyAgentApp.currentId")
        app.page.goto(f"{base_url}?demo-tps=0#/s/{session}")
        app.page.locator("html[data-app='ready']").wait_for(state="attached")
        reply = app.page.locator("#transcript .msg.assistant .md").first
        reply.locator(":scope > *").first.wait_for()  # rendered blocks, not plain text
        assert reply.evaluate("el => !el.classList.contains('md-plain')")
