"""The Files panel's list as a folder tree (web/files/preview.js): folders folded and unfolded by
mouse and keyboard (the WAI-ARIA tree pattern), file names never broken inside a word, and a list
the user widens (a drag handle or its arrow keys) that keeps its width after a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_a11y import axe_source, axe_violations  # noqa: F401  (a fixture, used by name)
from test_workspace_panel import listed, open_files, start_saved_chat, wait_for
from web_app_helpers import open_app

DESKTOP = {"width": 1400, "height": 900}

# 3 levels, 40 files; long names made of words, so that a break inside a word would show.
FILES = sorted(
    [f"library/README_{i}.md" for i in range(4)]
    + [f"library/scanner/tokenizer_state_machine_{i}.py" for i in range(12)]
    + [f"library/scanner/fixtures/very_long_fixture_name_for_wrapping_{i}.json" for i in range(12)]
    + [f"library/parser/grammar_rules_{i}.txt" for i in range(12)]
)

# Each drawn text node of each shown file name (a name's parts: its folders, with "/", and its
# name's two ends), with how many lines its boxes are on (one: never broken).
LINE_TOPS = """() => [...document.querySelectorAll('#side-panel .pa-file')].filter((f) => !f.closest('[hidden]'))
  .map((file) => [...file.querySelectorAll('.pa-file-name bdi')].filter((b) => b.getClientRects().length)
    .flatMap((bdi) => [...bdi.childNodes].filter((n) => n.nodeType === 3 && n.textContent).map((node) => {
      const range = document.createRange();
      range.selectNodeContents(node);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      return [node.textContent, tops.size];
    }).filter(([, lines]) => lines > 0)))"""


def visible_items(page: Any) -> list[str]:
    return [
        str(x)
        for x in page.evaluate(
            """() => [...document.querySelectorAll('#side-panel [role=treeitem]')]
                 .filter((i) => !i.closest('[hidden]')).map((i) => i.dataset.key)"""
        )
    ]


def focused_key(page: Any) -> str | None:
    return page.evaluate("() => document.activeElement?.dataset?.key ?? null")  # type: ignore[no-any-return]


def list_width(page: Any) -> float:
    return float(page.evaluate("() => document.querySelector('#side-panel .pa-files').getBoundingClientRect().width"))


def test_folder_tree_keyboard_names_and_width(browser: Any, base_url: str, tmp_path: Path, axe_source: str) -> None:  # noqa: F811
    app = open_app(browser, base_url, viewport=DESKTOP)
    page = app.page
    try:
        page.evaluate("() => localStorage.removeItem('py-agent.files.listWidth')")
        start_saved_chat(app)
        panel = open_files(app)
        for path in FILES:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(f"contents of {path}\n")
        panel.locator("input[webkitdirectory]").set_input_files(str(tmp_path / "library"))
        try:
            wait_for(page, lambda: listed(page) == FILES, timeout=60)
        except AssertionError:
            raise AssertionError(
                (listed(page)[:5], app.page_errors, panel.locator(".pa-status").inner_text())
            ) from None

        tree = panel.get_by_role("tree", name="Workspace files")
        assert tree.is_visible()
        folder = panel.locator(".pa-folder[data-folder='library/scanner']")
        assert folder.get_attribute("aria-expanded") == "true"
        assert folder.locator(":scope > .pa-row .pa-folder-count").inner_text() == "24 files"
        assert panel.locator(".pa-folder[data-folder='library'] > .pa-row .pa-folder-count").inner_text() == "40 files"
        assert len(visible_items(page)) == 40 + 4

        # No name is broken inside a word: every shown text node of a name is on one line.
        names = page.evaluate(LINE_TOPS)
        assert len(names) == 40 and all(names)
        for name in names:
            for text, lines in name:
                assert lines == 1, (text, lines)
        assert axe_violations(page, axe_source) == []

        # Mouse: a folder's row folds and unfolds it.
        folder.locator(":scope > .pa-row").click()
        assert folder.get_attribute("aria-expanded") == "false"
        assert len(visible_items(page)) == 40 + 4 - 25
        assert not panel.locator(".pa-file[data-path='library/scanner/tokenizer_state_machine_0.py']").is_visible()
        folder.locator(":scope > .pa-row").click()
        assert folder.get_attribute("aria-expanded") == "true"
        assert panel.locator(".pa-file[data-path='library/scanner/tokenizer_state_machine_0.py']").is_visible()

        # Keyboard: Home, Left folds, Right unfolds then enters, Down, End, Enter opens a file.
        folder.focus()
        page.keyboard.press("Home")
        assert focused_key(page) == "d:library"
        page.keyboard.press("ArrowLeft")
        assert visible_items(page) == ["d:library"]
        page.keyboard.press("ArrowRight")
        assert len(visible_items(page)) == 44
        page.keyboard.press("ArrowRight")
        assert focused_key(page) == "f:library/README_0.md"  # the tree keeps the paths' order
        for _ in range(4):
            page.keyboard.press("ArrowDown")
        assert focused_key(page) == "d:library/parser"
        page.keyboard.press("ArrowDown")
        assert focused_key(page) == "f:library/parser/grammar_rules_0.txt"
        page.keyboard.press("Enter")
        assert panel.locator(".pa-view-title").inner_text() == "library/parser/grammar_rules_0.txt"
        assert panel.locator("pre.pa-text").inner_text() == "contents of library/parser/grammar_rules_0.txt\n"
        # The preview beside the list is narrow here: the path keeps the room, the actions fold.
        more = panel.get_by_role("button", name="More actions")
        assert more.is_visible() and not panel.get_by_role("button", name="Rename", exact=True).is_visible()
        more.click()
        assert more.get_attribute("aria-expanded") == "true"
        assert panel.get_by_role("button", name="Rename", exact=True).is_visible()
        page.keyboard.press("Tab")
        page.keyboard.press("Escape")
        assert more.get_attribute("aria-expanded") == "false" and focused_key(page) is None
        panel.locator(".pa-file[data-path='library/parser/grammar_rules_0.txt']").focus()
        page.keyboard.press("ArrowLeft")
        assert focused_key(page) == "d:library/parser"
        page.keyboard.press("End")
        assert focused_key(page) == "f:library/scanner/tokenizer_state_machine_9.py"
        # The focused file shows its whole path, wrapped only after a "/".
        shown = page.evaluate(LINE_TOPS)
        assert ["library/", 1] in shown[-1] and ["scanner/", 1] in shown[-1]
        for name in shown:
            for text, lines in name:
                assert lines == 1, (text, lines)
        # Only one item takes Tab.
        assert page.locator("#side-panel [role=treeitem][tabindex='0']").count() == 1
        assert axe_violations(page, axe_source) == []

        # The list is widened by its handle's keys and by dragging it; the width survives a reload.
        handle = panel.get_by_role("separator", name="Width of the file list")
        before = list_width(page)
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        assert abs(list_width(page) - (before + 48)) <= 1
        box = handle.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 100)
        page.mouse.down()
        page.mouse.move(box["x"] + 23, box["y"] + 100, steps=4)
        page.mouse.up()
        wide = list_width(page)
        assert wide >= before + 48 + 15
        assert int(handle.get_attribute("aria-valuenow") or 0) == round(wide)
        page.reload()
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        page.locator("#transcript .msg.user", has_text="Hello there").wait_for(timeout=30_000)
        panel = open_files(app)
        wait_for(page, lambda: len(listed(page)) == 40, timeout=60)
        assert abs(list_width(page) - wide) <= 1
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def pdf_bytes(pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=14)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(text=f"Page {n}: quarterly revenue grew in the North region.")
    return bytes(pdf.output())


# A canvas with more than one colour drawn: a page, not a blank box.
CANVAS_INKED = """(canvas) => {
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let dark = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i] < 128 && data[i + 3] > 0) dark++;
  return canvas.width > 100 && dark > 50;
}"""


def test_a_pdf_shows_its_pages_and_the_text_sent(
    browser: Any,
    base_url: str,
    tmp_path: Path,
    axe_source: str,  # noqa: F811
) -> None:
    app = open_app(browser, base_url, viewport=DESKTOP)
    page = app.page
    try:
        start_saved_chat(app)
        panel = open_files(app)
        report = tmp_path / "report.pdf"
        report.write_bytes(pdf_bytes(5))
        notes = tmp_path / "notes.txt"
        notes.write_text("not a PDF\n")
        panel.locator("input[type=file]:not([webkitdirectory])").set_input_files([str(report), str(notes)])
        wait_for(page, lambda: sorted(listed(page)) == ["notes.txt", "report.pdf"], timeout=60)
        panel.locator(".pa-file", has_text="report.pdf").click()
        first = panel.get_by_role("img", name="Page 1 of 5")
        first.wait_for(timeout=30_000)
        assert panel.locator("canvas.pa-page").count() == 5
        panel.locator("canvas.pa-page[data-page='1'][data-drawn='true']").wait_for(timeout=30_000)
        assert first.evaluate(CANVAS_INKED) is True
        text = panel.get_by_role("region", name="Text sent to the model")
        meta = text.locator(".pa-doc-meta")
        wait_for(page, lambda: "characters" in meta.inner_text(), timeout=30)
        sent = text.locator("pre").text_content() or ""
        assert "Page 1: quarterly revenue grew in the North region." in sent
        assert "Page 5: quarterly" in sent
        assert meta.inner_text().startswith(f"{len(sent):,} characters, about {-(-len(sent) // 4):,} tokens.")
        assert "Binary file" not in panel.inner_text()
        assert axe_violations(page, axe_source) == []
        # Another file ends the PDF's document (pdf.js's worker with it) without an error.
        panel.locator(".pa-file", has_text="notes.txt").click()
        panel.locator(".pa-text", has_text="not a PDF").wait_for(timeout=10_000)
        assert panel.locator("canvas.pa-page").count() == 0
        page.wait_for_timeout(200)  # an error of the ending would be reported by now
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def test_docx_and_xlsx_show_the_text_sent(browser: Any, base_url: str, tmp_path: Path) -> None:
    from test_composer_attachments import docx_bytes, xlsx_bytes

    app = open_app(browser, base_url, viewport=DESKTOP)
    page = app.page
    try:
        start_saved_chat(app)
        panel = open_files(app)
        (tmp_path / "plan.docx").write_bytes(docx_bytes())
        (tmp_path / "sales.xlsx").write_bytes(xlsx_bytes())
        panel.locator("input[type=file]:not([webkitdirectory])").set_input_files(
            [str(tmp_path / "plan.docx"), str(tmp_path / "sales.xlsx")]
        )
        wait_for(page, lambda: listed(page) == ["plan.docx", "sales.xlsx"], timeout=60)
        text = panel.get_by_role("region", name="Text sent to the model")
        panel.locator(".pa-file", has_text="plan.docx").click()
        wait_for(page, lambda: "characters" in text.locator(".pa-doc-meta").inner_text(), timeout=30)
        assert "The migration plan has three phases." in (text.locator("pre").text_content() or "")
        panel.locator(".pa-file", has_text="sales.xlsx").click()
        wait_for(page, lambda: "North,120" in (text.locator("pre").text_content() or ""), timeout=30)
        assert '<sheet name="Sales">\nregion,total\nNorth,120\nSouth,80\n</sheet>' in (
            text.locator("pre").text_content() or ""
        )
        assert panel.locator("canvas.pa-page").count() == 0
        assert "Binary file" not in panel.inner_text()
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()
