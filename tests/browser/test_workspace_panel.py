"""The Files panel as a place the user fills (web/files/preview.js, py_agent/browser/workspace.py):
upload a folder (picker) and files (picker, and files and a folder dropped onto the panel), new file
(edited in place), rename, delete, download one and all; a file over the limit is refused with a clear message while the rest
is added; everything is back after a reload. The chat keeps its room beside the panel, and on a
phone the panel is a full-screen sheet."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from web_app_helpers import App, open_app

FOLDER = {
    "project/README.md": "# Project\n\nNotes for the agent.\n",
    "project/src/main.py": "print('hello from main')\n",
    "project/src/data/numbers.csv": "n\n1\n2\n3\n",
}
IMAGE = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

DROP_FOLDER = """() => {
  const file = (dir, name, text) => ({
    isFile: true, isDirectory: false, name, fullPath: `${dir}/${name}`,
    file: (ok) => ok(new File([text], name, { type: "text/plain" })),
  });
  const folder = (fullPath, children) => ({
    isFile: false, isDirectory: true, fullPath,
    // Like the browser: entries come in batches, then an empty batch.
    createReader: () => { const batches = [children.slice(0, 1), children.slice(1), []];
      return { readEntries: (ok) => ok(batches.shift() ?? []) }; },
  });
  const dropped = folder("/dropped", [file("/dropped", "one.txt", "one"),
    folder("/dropped/sub", [file("/dropped/sub", "two.txt", "two")])]);
  const event = new Event("drop", { bubbles: true, cancelable: true });
  Object.defineProperty(event, "dataTransfer", { value: {
    types: ["Files"], files: [], items: [{ kind: "file", webkitGetAsEntry: () => dropped }] } });
  document.querySelector("#side-panel .pa-preview").dispatchEvent(event);
  return event.defaultPrevented;
}"""


DROP_FILES = """() => {
  const data = new DataTransfer();
  data.items.add(new File(["loose"], "loose.txt", { type: "text/plain" }));
  const event = new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: data });
  document.querySelector("#side-panel .pa-preview").dispatchEvent(event);
  return event.defaultPrevented;
}"""


def wait_for(page: Any, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    waited = 0.0
    while not predicate():
        if waited > timeout:
            raise AssertionError("condition not met in time")
        page.wait_for_timeout(100)
        waited += 0.1


def listed(page: Any) -> list[str]:
    return [str(t) for t in page.locator("#side-panel .pa-file-name").all_inner_texts()]


def open_files(app: App) -> Any:
    page = app.page
    page.locator("#session-menu-btn").click()
    page.get_by_role("menuitem", name="Files…").click()
    panel = page.locator("#side-panel")
    panel.wait_for(state="visible", timeout=20_000)
    panel.locator(".pa-preview").wait_for(timeout=60_000)
    return panel


def start_saved_chat(app: App) -> None:
    """A chat with one demo exchange, so that it is saved and comes back after a reload."""
    app.type_and_enter("Hello there")
    app.wait_idle()
    app.page.locator("#session-menu-btn:not([disabled])").wait_for(timeout=20_000)


def panel_button(panel: Any, name: str) -> Any:
    """A button of the panel's headers; a narrow preview keeps the file's actions behind "More actions"."""
    more = panel.locator(".pa-view-header .pa-more")
    actions = ("Edit", "Rename", "Delete", "Download")
    if name in actions and more.is_visible() and more.get_attribute("aria-expanded") != "true":
        more.click()
    return panel.locator(".pa-preview-header, .pa-view-header").get_by_role("button", name=name, exact=True)


def test_folder_upload_rename_delete_download_and_reload(browser: Any, base_url: str, tmp_path: Path) -> None:
    app = open_app(browser, base_url)
    page = app.page
    try:
        start_saved_chat(app)
        panel = open_files(app)

        # The empty state offers upload; every control is named by its visible text.
        empty = panel.locator(".pa-empty")
        assert "No files yet" in empty.inner_text()
        assert empty.get_by_role("button", name="Upload files", exact=True).is_visible()
        assert empty.get_by_role("button", name="Upload folder", exact=True).is_visible()
        unnamed = page.evaluate(
            """() => [...document.querySelectorAll('#side-panel button')].filter((b) => b.offsetParent)
                 .filter((b) => b.getAttribute('aria-label') && !b.getAttribute('aria-label').includes(b.innerText.trim()))
                 .map((b) => b.outerHTML)"""
        )
        assert unnamed == []

        # A folder through the folder picker: every file, with its path.
        root = tmp_path / "project"
        for path, text in FOLDER.items():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text)
        (root / "pixel.png").write_bytes(IMAGE)
        panel.locator("input[webkitdirectory]").set_input_files(str(root))
        expected = sorted([*FOLDER, "project/pixel.png"])
        wait_for(page, lambda: listed(page) == expected)
        assert "Added 4 files." in panel.locator(".pa-status").inner_text()

        # Files through the file picker; one is over the limit: it is refused, the other is added.
        big = tmp_path / "big.bin"
        with big.open("wb") as handle:
            handle.truncate(26 * 1024 * 1024)
        small = tmp_path / "notes.txt"
        small.write_text("remember the milk\n")
        panel.locator("input[type=file]:not([webkitdirectory])").set_input_files([str(big), str(small)])
        alert = panel.locator(".pa-errors[role=alert]")
        alert.get_by_text("big.bin was not added: 26.0 MB is over the limit of 25.0 MB per file.").wait_for()
        wait_for(page, lambda: "notes.txt" in listed(page))
        assert "big.bin" not in listed(page)
        alert.get_by_role("button", name="Dismiss").click()

        # A folder dropped onto the panel (DataTransferItem.webkitGetAsEntry), walked to the end.
        assert page.evaluate(DROP_FOLDER) is True
        wait_for(page, lambda: {"dropped/one.txt", "dropped/sub/two.txt"} <= set(listed(page)))
        # Plain files dropped (no entries to walk): the DataTransfer's files.
        assert page.evaluate(DROP_FILES) is True
        wait_for(page, lambda: "loose.txt" in listed(page))
        assert panel.locator("pre.pa-text").inner_text() == "loose"
        panel_button(panel, "Delete").click()
        panel.get_by_role("button", name="Delete file").click()
        wait_for(page, lambda: "loose.txt" not in listed(page))

        # Rename (a taken name is refused and what was typed stays), then the preview follows.
        panel.locator(".pa-file", has_text="project/src/main.py").click()
        panel_button(panel, "Rename").click()
        name = panel.get_by_label("New name for project/src/main.py")
        name.fill("project/README.md")
        panel.get_by_role("button", name="Save name").click()
        panel.locator(".pa-form-error", has_text="project/README.md already exists").wait_for()
        assert name.input_value() == "project/README.md"
        name.fill("project/src/app.py")
        panel.get_by_role("button", name="Save name").click()
        wait_for(page, lambda: "project/src/app.py" in listed(page) and "project/src/main.py" not in listed(page))
        assert panel.locator(".pa-view-title").inner_text() == "project/src/app.py"
        assert "hello from main" in panel.locator("pre.pa-text").inner_text()

        # Delete, after a confirmation.
        panel.locator(".pa-file", has_text="project/pixel.png").click()
        panel_button(panel, "Delete").click()
        panel.get_by_role("button", name="Delete file").click()
        wait_for(page, lambda: "project/pixel.png" not in listed(page))

        # New file.
        panel_button(panel, "New file").click()
        panel.get_by_label("New file name (folders with /)").fill("todo/next.txt")
        panel.get_by_role("button", name="Create", exact=True).click()
        wait_for(page, lambda: "todo/next.txt" in listed(page))
        assert panel.locator(".pa-view-title").inner_text() == "todo/next.txt"
        # It opens in the editor; Save writes it.
        panel.get_by_label("Contents of todo/next.txt").fill("- try the upload\n")
        panel.get_by_role("button", name="Save", exact=True).click()
        panel.locator("pre.pa-text", has_text="- try the upload").wait_for()

        final = sorted(
            [
                "dropped/one.txt",
                "dropped/sub/two.txt",
                "notes.txt",
                "project/README.md",
                "project/src/app.py",
                "project/src/data/numbers.csv",
                "todo/next.txt",
            ]
        )
        assert listed(page) == final

        # Download one file, then all of them as a zip.
        panel.locator(".pa-file", has_text="project/README.md").click()
        with page.expect_download() as one:
            panel_button(panel, "Download").click()
        assert one.value.suggested_filename == "README.md"
        assert Path(one.value.path()).read_text() == FOLDER["project/README.md"]
        with page.expect_download() as everything:
            panel_button(panel, "Download all (.zip)").click()
        archive = zipfile.ZipFile(io.BytesIO(Path(everything.value.path()).read_bytes()))
        assert sorted(archive.namelist()) == final
        assert archive.read("project/src/app.py").decode() == FOLDER["project/src/main.py"]
        assert archive.read("dropped/sub/two.txt") == b"two"
        assert archive.read("todo/next.txt") == b"- try the upload\n"

        # A reload: the session and its files are back.
        page.reload()
        page.locator("html[data-app='ready']").wait_for(state="attached", timeout=120_000)
        page.locator("#transcript .msg.user", has_text="Hello there").wait_for(timeout=30_000)
        panel = open_files(app)
        wait_for(page, lambda: listed(page) == final)
        panel.locator(".pa-file", has_text="dropped/one.txt").click()
        assert panel.locator("pre.pa-text").inner_text() == "one"
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()


def test_the_chat_keeps_its_room_beside_the_panel_and_phones_get_a_sheet(browser: Any, base_url: str) -> None:
    app = open_app(browser, base_url, viewport={"width": 1150, "height": 860})
    page = app.page
    try:
        start_saved_chat(app)
        open_files(app)
        main = page.locator("#chat").bounding_box()
        side = page.locator("#side-panel").bounding_box()
        assert main is not None and side is not None
        assert main["width"] >= 30 * 16 and side["x"] >= main["x"] + main["width"] - 1
        for selector in ("#model-button", "#input"):
            box = page.locator(selector).bounding_box()
            assert box is not None and box["x"] + box["width"] <= side["x"] + 1, selector
        assert page.locator("#input").bounding_box()["width"] >= 300  # type: ignore[index]
        label = page.locator("#model-button .model-label")
        assert label.evaluate("(e) => e.scrollWidth <= e.clientWidth"), "the model's name is cut"

        # A window too narrow for both: the panel slides over the chat, which keeps its width.
        page.set_viewport_size({"width": 900, "height": 800})
        main = page.locator("#chat").bounding_box()
        assert main is not None and main["width"] >= 900 - 17 * 16 - 1
        page.locator("#side-panel-close").click()
        page.locator("#side-panel").wait_for(state="hidden")
        assert page.locator("#input").is_visible()

        # A phone: a full-screen sheet, with the file list above the preview.
        page.set_viewport_size({"width": 390, "height": 844})
        open_files(app)
        sheet = page.locator("#side-panel").bounding_box()
        assert sheet is not None
        assert (sheet["x"], sheet["y"], sheet["width"], sheet["height"]) == (0, 0, 390, 844)
        columns = page.evaluate(
            "() => getComputedStyle(document.querySelector('#side-panel .pa-preview-body')).gridTemplateColumns"
        )
        assert len(str(columns).split()) == 1, columns
        assert page.get_by_role("button", name="Upload files").first.is_visible()
        page.locator("#side-panel-close").click()
        page.locator("#side-panel").wait_for(state="hidden")
        assert not app.page_errors, app.page_errors
    finally:
        page.context.close()
