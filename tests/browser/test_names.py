"""Names the user gives, in Chromium through the chat app and the mock provider server:

- a name holding U+202E, U+200F, a zero-width joiner and an escape sequence is drawn with those
  characters visible (web/ui/dom.js nameNode) and isolated, on its chip and the chip's error, in
  the Files panel, in tool cards, in the sessions list, the heading, dialogs and notices, and the
  text after it reads in its own order;
- names a disk cannot hold (dropped from another page) are kept under a safe name shown beside
  the original, or refused naming the file and the reason, on the conversation and on the Files
  panel (py_agent/tools/workspace.py safe_path);
- a re-uploaded folder asks: replace, keep both or skip, for one or for all, and the summary counts
  what happened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_a11y import axe_source as axe_source
from test_a11y import axe_violations
from test_composer_attachments import chips, drop_files, start, wait_ready, workspace_files
from test_workspace_panel import listed, open_files, wait_for
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

RLO, RLM, ZWJ, ESC = "\u202e", "\u200f", "\u200d", "\x1b"
# Drawn raw, the override (U+202E) would reverse what follows it: "report" + "txt.exe" read backwards.
HOSTILE = f"report{RLO}txt.exe{RLM}{ZWJ}{ESC}[31m.txt"
VISIBLE = "report⟨U+202E⟩txt.exe⟨U+200F⟩⟨U+200D⟩⟨U+001B⟩[31m.txt"
# Kept in the workspace with the escape (a control character) as "_": safe_path.
STORED = f"report{RLO}txt.exe{RLM}{ZWJ}_[31m.txt"
STORED_VISIBLE = "report⟨U+202E⟩txt.exe⟨U+200F⟩⟨U+200D⟩_[31m.txt"
# Characters that may change the order or the look of text, and must never reach the DOM raw.
RAW = "\u202a\u202b\u202c\u202d\u202e\u200e\u200f\u200d\u200b\u2066\u2067\u061c\x1b"

# In the page: every text node under `root` and the attributes its elements show (title,
# aria-label, alt), for raw hidden characters (data-* attributes keep the real name); and whether the characters of `text` (found in `root`'s text) go left to right.
CHECKS = """([selector, raw]) => {
  const found = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode())
      if ([...n.data].some((c) => raw.includes(c))) found.push(n.data);
    for (const el of [root, ...root.querySelectorAll("*")])
      for (const a of ["title", "aria-label", "alt"])
        if ([...(el.getAttribute(a) ?? "")].some((c) => raw.includes(c))) found.push(`${a}=${el.getAttribute(a)}`);
  }
  return found;
}"""

IN_ORDER = """([selector, text]) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const at = n.data.indexOf(text);
    if (at === -1) continue;
    const xs = [];
    for (let i = at; i < at + text.length; i++) {
      if (n.data[i] === " ") continue;
      const range = document.createRange();
      range.setStart(n, i);
      range.setEnd(n, i + 1);
      const rect = range.getClientRects()[0];
      if (rect) xs.push([rect.top, rect.left]);
    }
    // Left to right on each line (a wrapped line starts again at the left).
    return xs.length > 3 && xs.every(([y, x], i) => i === 0 || y > xs[i - 1][0] + 2 || x > xs[i - 1][1]);
  }
  return null;
}"""

ISOLATED = """(selector) => [...document.querySelectorAll(selector)].map((el) => {
  const bdi = el.matches("bdi.uname") ? el : el.querySelector("bdi.uname");
  return bdi ? [bdi.dir, getComputedStyle(bdi).unicodeBidi, bdi.textContent] : null;
})"""


def raw_hidden(app: App, selector: str) -> list[str]:
    return list(app.page.evaluate(CHECKS, [selector, RAW]))


def reads_in_order(app: App, selector: str, text: str) -> bool:
    result = app.page.evaluate(IN_ORDER, [selector, text])
    assert result is not None, f"{text!r} not in {selector}"
    return bool(result)


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    vision = {"id": "mock-vision", "name": "Mock Vision", "input": ["text", "image"]}
    with open_app(browser, base_url) as app:
        app.add_provider("Vision", mock, [vision], key="sk-mock-vision-key-0001")
        yield app


def test_a_hostile_name_is_shown_with_its_characters_visible_and_isolated_everywhere(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    # Dropped on the conversation, with a file whose type is refused (its chip's error names it).
    drop_files(
        app,
        [(HOSTILE, b"hello\n", "text/plain"), (f"notes{RLO}exe.bin", b"\x00\x01", "application/x-msdownload")],
    )
    wait_ready(app, 1)
    chip = chips(app, "ready").first
    assert chip.locator(".att-name").inner_text() == VISIBLE
    assert page.evaluate(ISOLATED, "#attachments .att-name") == [
        ["auto", "isolate", VISIBLE],
        ["auto", "isolate", "notes⟨U+202E⟩exe.bin"],
    ]
    # The safe name it will be stored under is shown beside it.
    assert chip.locator(".att-saved").inner_text() == f"saved as uploads/{STORED_VISIBLE}"
    assert chip.get_by_role("button", name=f"Remove {VISIBLE}", exact=True).count() == 1
    error = chips(app, "error").locator(".att-error")
    assert "notes⟨U+202E⟩exe.bin: this file type isn't supported" in error.inner_text()
    assert reads_in_order(app, "#attachments [data-status=error] .att-error", "this file type isn't supported")
    assert raw_hidden(app, "#attachments") == []
    chips(app, "error").get_by_role("button").click()

    # The model reads it, and tries to write a file with the hostile name (refused: the escape).
    stored = f"uploads/{STORED}"
    mock.script(
        [
            {
                "tool_calls": [
                    {"id": "r1", "name": "read", "arguments": {"path": stored}},
                    {"id": "l1", "name": "ls", "arguments": {"path": "uploads"}},
                    {"id": "w1", "name": "write", "arguments": {"path": HOSTILE, "content": "x"}},
                ]
            },
            {"text": "Done."},
        ]
    )
    app.type_and_enter("Look at this")
    page.locator("#transcript .msg.assistant", has_text="Done.").wait_for(timeout=120_000)
    app.wait_idle(timeout=60_000)
    assert set(workspace_files(app, app.current_session_id())) == {stored}
    read_card = page.locator("#transcript details.tool", has=page.locator(".tool-title", has_text="read"))
    write_card = page.locator("#transcript details.tool", has=page.locator(".tool-title", has_text="write"))
    assert read_card.locator(".tool-summary").inner_text() == f"uploads/{STORED_VISIBLE}"
    assert write_card.locator(".tool-summary").inner_text() == VISIBLE
    assert page.evaluate(ISOLATED, "#transcript .tool-summary") == [
        ["auto", "isolate", f"uploads/{STORED_VISIBLE}"],
        ["auto", "isolate", "uploads"],
        ["auto", "isolate", VISIBLE],
    ]
    # What ls listed (the model's text) shows the characters too.
    ls_card = page.locator("#transcript details.tool", has=page.locator(".tool-title", has_text="ls"))
    ls_card.locator("summary").click()
    assert STORED_VISIBLE in ls_card.locator(".tool-pre").last.inner_text()
    # The sent message's tile.
    tile = page.locator("#transcript .msg.user .att-tile").first
    assert tile.locator(".att-name").inner_text() == STORED_VISIBLE
    assert raw_hidden(app, "#transcript") == []

    # The Files panel: the list, the selected file's header, the delete confirmation.
    panel = open_files(app)
    wait_for(page, lambda: listed(page) == [f"uploads/{STORED_VISIBLE}"])
    panel.locator(".pa-file").first.click()
    assert panel.locator(".pa-view-title").inner_text() == f"uploads/{STORED_VISIBLE}"
    if panel.locator(".pa-more").is_visible():  # a narrow preview folds the file's actions
        panel.locator(".pa-more").click()
    panel.locator(".pa-view-header").get_by_role("button", name="Delete", exact=True).click()
    confirm = panel.locator(".pa-form p:not(.pa-form-error)")
    assert confirm.inner_text().startswith(f"Delete uploads/{STORED_VISIBLE}? This cannot be undone")
    assert reads_in_order(app, "#side-panel .pa-form p:not(.pa-form-error)", "This cannot be undone")
    assert raw_hidden(app, "#side-panel") == []
    panel.get_by_role("button", name="Cancel").click()

    # The session named with it: the heading, the list, the rename and delete dialogs, a notice.
    app.py("rename_session", id=app.current_session_id(), name=HOSTILE)
    page.locator("#session-title", has_text=VISIBLE).wait_for()
    assert page.evaluate(ISOLATED, "#session-title") == [["auto", "isolate", VISIBLE]]
    assert page.title() == f"\u2068{VISIBLE}\u2069 · py-agent"
    row = page.locator("#session-list .session-row", has_text=VISIBLE).first
    row.wait_for()
    assert raw_hidden(app, "#session-title, #session-list") == []
    page.locator("#rename-session").click()
    dialog = page.locator("dialog[open]")
    assert dialog.locator(".dialog-body p").inner_text() == f"Now: {VISIBLE}"
    dialog.get_by_role("button", name="Cancel").click()
    page.evaluate("(name) => import('./ui/toasts.js').then((m) => m.toast(`Saved ${name} just now.`, 'info'))", HOSTILE)
    assert page.locator("#toasts .toast-text", has_text="just now").inner_text() == f"Saved {VISIBLE} just now."
    assert raw_hidden(app, "#toasts") == []
    page.locator("#session-menu-btn").click()
    page.get_by_role("menuitem", name="Delete session").click()
    dialog = page.locator("dialog[open]")
    assert dialog.locator(".dialog-body p").inner_text().startswith(f"“{VISIBLE}” and all its messages are deleted")
    assert reads_in_order(app, "dialog[open] .dialog-body p", "and all its messages are deleted")
    assert raw_hidden(app, "dialog[open]") == []
    dialog.get_by_role("button", name="Cancel").click()
    assert not app.page_errors, app.page_errors


HOSTILE_DROPS = ["/workspace/../tmp/absws-x.txt", "....//....//dots-x.txt", "L" * 1200 + ".txt", "...."]
LONG_SAFE = "L" * 250 + "\u2026.txt"

DROP_ON_PANEL = """([files]) => {
  const data = new DataTransfer();
  for (const [name, text] of files) data.items.add(new File([text], name, { type: "text/plain" }));
  const event = new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: data });
  document.querySelector("#side-panel .pa-preview").dispatchEvent(event);
  return event.defaultPrevented;
}"""


def test_names_a_disk_cannot_hold_are_kept_under_a_safe_name_or_refused_with_the_reason(
    app: App, mock: MockProviderServer, axe_source: str
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    # On the conversation: each chip shows where its file goes, or why it cannot be kept.
    drop_files(app, [(name, f"from {i}\n".encode(), "text/plain") for i, name in enumerate(HOSTILE_DROPS)])
    wait_ready(app, 3)
    saved = [t.removeprefix("saved as ") for t in page.locator("#attachments .att-saved").all_inner_texts()]
    assert saved == ["uploads/absws-x.txt", "uploads/dots-x.txt", f"uploads/{LONG_SAFE}"]
    refused = chips(app, "error")
    wait_until(lambda: "no part of its name can be a file name" in refused.inner_text(), timeout=20)
    assert refused.locator(".att-error").inner_text() == "'....' was not added: no part of its name can be a file name"
    refused.get_by_role("button").click()
    mock.script([{"text": "Got them."}])
    app.type_and_enter("Three files")
    page.locator("#transcript .msg.assistant", has_text="Got them.").wait_for(timeout=120_000)
    app.wait_idle()
    files = workspace_files(app, app.current_session_id())
    assert files == {
        "uploads/absws-x.txt": b"from 0\n",
        "uploads/dots-x.txt": b"from 1\n",
        f"uploads/{LONG_SAFE}": b"from 2\n",
    }
    body = json.dumps(mock.requests[-1]["body"])
    assert "uploads/absws-x.txt" in body and "uploads/dots-x.txt" in body
    # The sent message's tiles: named by their visible text (axe: label-content-name-mismatch).
    assert page.locator("#transcript .msg.user .att-tile").count() == 3
    violations = axe_violations(page, axe_source)
    assert violations == [], "\n".join(violations)

    # On the Files panel: the same names, the same rule; the summary and the report say it all.
    panel = open_files(app)
    wait_for(page, lambda: len(listed(page)) == 3)
    drops = [[name, f"panel {i}\n"] for i, name in enumerate(HOSTILE_DROPS)]
    assert page.evaluate(DROP_ON_PANEL, [drops]) is True
    wait_for(page, lambda: "Added" in panel.locator(".pa-status").inner_text())
    assert panel.locator(".pa-status").inner_text() == "Added 3 files; 1 not added."
    report = panel.locator(".pa-errors").inner_text()
    assert "'....' was not added: no part of its name can be a file name" in report
    assert "/workspace/../tmp/absws-x.txt is stored as tmp/absws-x.txt (its name can't be kept as it is)." in report
    assert "....//....//dots-x.txt is stored as dots-x.txt" in report
    assert f"is stored as {LONG_SAFE}" in report
    assert {"tmp/absws-x.txt", "dots-x.txt", LONG_SAFE} <= set(listed(page))
    files = workspace_files(app, app.current_session_id())
    assert files["tmp/absws-x.txt"] == b"panel 0\n" and files[LONG_SAFE] == b"panel 2\n"
    assert len(files) == 6
    assert not app.page_errors, app.page_errors


def test_a_re_uploaded_folder_asks_replace_keep_both_or_skip_and_the_summary_counts(
    app: App, mock: MockProviderServer, tmp_path: Path, axe_source: str
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    mock.script([{"text": "Hi."}])
    app.type_and_enter("A chat with files")
    app.wait_idle()
    panel = open_files(app)
    root = tmp_path / "docs"
    root.mkdir()
    names = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]
    for name in names:
        (root / name).write_text(f"old {name}")
    panel.locator("input[webkitdirectory]").set_input_files(str(root))
    wait_for(page, lambda: listed(page) == [f"docs/{n}" for n in names])
    assert panel.locator(".pa-status").inner_text() == "Added 5 files."

    for name in names:
        (root / name).write_text(f"new {name}")
    (root / "f.txt").write_text("new f.txt")
    panel.locator("input[webkitdirectory]").set_input_files(str(root))
    dialog = page.locator("dialog[open]")

    def ask(others: int) -> str:
        """The dialog's question (the browser picks the order of a folder's files): the path asked about."""
        dialog.wait_for()
        assert dialog.get_by_role("heading").inner_text() == "This name is taken"
        text = dialog.locator("p").first.inner_text()
        path = text.split(" is already in the workspace.")[0]
        assert path.startswith("docs/") and path != "docs/f.txt", text
        label = dialog.get_by_label(f"Do the same for the {others} other file", exact=False)
        assert label.count() == 1
        for choice in ("Replace", "Keep both", "Skip"):
            assert dialog.get_by_role("button", name=choice, exact=True).is_visible()
        return path

    # Replace, by mouse.
    replaced = ask(4)
    violations = axe_violations(page, axe_source)
    assert violations == [], "\n".join(violations)
    dialog.get_by_role("button", name="Replace", exact=True).click()
    # Keep both, by keyboard (the dialog opens on Keep both).
    kept = ask(3)
    assert page.evaluate("() => document.activeElement.textContent") == "Keep both"
    page.keyboard.press("Enter")
    # Escape skips this one.
    escaped = ask(2)
    page.keyboard.press("Escape")
    # Skip, for the other one too; f.txt is new and added without a question.
    skipped = ask(1)
    dialog.get_by_label("Do the same for the 1 other file whose names are taken").check()
    dialog.get_by_role("button", name="Skip", exact=True).click()
    wait_for(page, lambda: "replaced" in panel.locator(".pa-status").inner_text())
    assert panel.locator(".pa-status").inner_text() == "Added 2 files, replaced 1, skipped 3."
    assert dialog.count() == 0
    copy = kept.replace(".txt", " (2).txt")
    report = panel.locator(".pa-errors").inner_text()
    assert f"{kept} is stored as {copy} (kept beside the file of that name)." in report
    files = {p: v.decode() for p, v in workspace_files(app, app.current_session_id()).items()}
    expected = {f"docs/{n}": f"old {n}" for n in names}
    expected[replaced] = f"new {replaced.removeprefix('docs/')}"
    expected[copy] = f"new {kept.removeprefix('docs/')}"
    expected["docs/f.txt"] = "new f.txt"
    assert files == expected
    assert len({replaced, kept, escaped, skipped}) == 4
    assert not app.page_errors, app.page_errors
