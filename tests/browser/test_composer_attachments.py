"""Attachments in the message box, in Chromium through the chat app and the mock provider server:

- an image attached by the Attach button (file picker), by paste and by drop reaches a vision
  model's request as an image block (a GIF as PNG), with chips (thumbnails) before and tiles after;
- a model without image input gets a notice in the composer and no request until "Send anyway";
- a PDF, a DOCX and an XLSX made here, and a CSV, reach the request as extracted text naming the
  file; the originals are in the session's workspace under uploads/ and the `python` tool reads the
  CSV from /workspace;
- errors show on the chip and lose nothing (an unsupported file, a broken and a password-protected PDF);
- the export, opened by pi's own SessionManager (@earendil-works/pi-coding-agent 0.79.10), gives a
  context with the image block and the document text; importing it brings back tiles and files.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_app_helpers import App, open_app, wait_until

from py_agent.testing.mock_server import MockProviderServer

HERE = Path(__file__).resolve().parent
PI_CONTEXT = HERE / "pi_session_context.mjs"
PI_PACKAGE = "@earendil-works/pi-coding-agent@0.79.10"
CACHE = HERE.parent.parent / ".cache" / "pi-coding-agent-0.79.10"


# ---- files the test makes -----------------------------------------------------------------------


def image_bytes(fmt: str, size: tuple[int, int] = (320, 200), color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, color)
    ImageDraw.Draw(image).rectangle((20, 20, size[0] // 2, size[1] // 2), fill=(20, 40, 220))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def pdf_bytes() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=14)
    pdf.add_page()
    pdf.cell(text="Quarterly revenue grew 12 percent in the North region.")
    pdf.add_page()
    pdf.cell(text="Page two: costs fell in the South region.")
    return bytes(pdf.output())


def locked_pdf_bytes() -> bytes:
    from fpdf import FPDF
    from fpdf.enums import EncryptionMethod

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="Secret figures")
    pdf.set_encryption(owner_password="owner", user_password="user", encryption_method=EncryptionMethod.RC4)
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Migration plan", level=1)
    document.add_paragraph("The migration plan has three phases.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Sales"
    for row in (["region", "total"], ["North", 120], ["South", 80]):
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


CSV = "name,score\nAda,91\nLin,87\n"


# ---- the page -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(browser: Any, base_url: str, mock: MockProviderServer) -> Iterator[App]:
    vision = {"id": "mock-vision", "name": "Mock Vision", "input": ["text", "image"]}
    texty = {"id": "mock-text", "name": "Mock Text"}
    with open_app(browser, base_url) as app:
        app.add_provider("Vision", mock, [vision], key="sk-mock-vision-key-0001")
        app.add_provider("Texty", mock, [texty], api="openai-completions", key="sk-mock-text-key-0002")
        app.page.evaluate(
            """() => { window.__csp = [];
              document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`)); }"""
        )
        yield app


def start(app: App, mock: MockProviderServer, query: str, label: str) -> None:
    app.new_chat()
    app.choose_model(query, label)
    mock.reset()


def attach_by_picker(app: App, files: list[tuple[str, bytes, str]]) -> None:
    page = app.page
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files([{"name": n, "mimeType": m, "buffer": b} for n, b, m in files])


_MAKE_TRANSFER = """([files]) => {
  const dt = new DataTransfer();
  for (const [name, b64, type] of files) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    dt.items.add(new File([bytes], name, { type }));
  }
  return dt;
}"""


def _encoded(files: list[tuple[str, bytes, str]]) -> list[list[str]]:
    return [[n, base64.b64encode(b).decode(), m] for n, b, m in files]


def paste_files(app: App, files: list[tuple[str, bytes, str]]) -> None:
    app.page.evaluate(
        f"""(args) => {{
          const dt = ({_MAKE_TRANSFER})(args);
          const input = document.querySelector("#input");
          input.focus();
          input.dispatchEvent(new ClipboardEvent("paste", {{ clipboardData: dt, bubbles: true, cancelable: true }}));
        }}""",
        [_encoded(files)],
    )


def drop_files(app: App, files: list[tuple[str, bytes, str]]) -> None:
    app.page.evaluate(
        f"""(args) => {{
          const dt = ({_MAKE_TRANSFER})(args);
          const zone = document.querySelector("#scroller");
          for (const type of ["dragenter", "dragover", "drop"])
            zone.dispatchEvent(new DragEvent(type, {{ dataTransfer: dt, bubbles: true, cancelable: true }}));
        }}""",
        [_encoded(files)],
    )


def send(app: App, text: str, timeout: float = 60_000) -> None:
    """Type and press Enter; wait for the reply to the message to be complete."""
    page = app.page
    replies = page.locator("#transcript .msg.assistant:not(.streaming)").count()
    app.type_and_enter(text)
    wait_until(
        lambda: (
            page.locator("#transcript .msg.assistant:not(.streaming)").count() > replies
            or bool(page.locator("#attach-notice.error, #toasts .toast.error").count())
        ),
        timeout=timeout / 1000,
    )
    assert not page.locator("#attach-notice.error").count(), page.locator("#attach-notice").inner_text()
    app.wait_idle(timeout)


def chips(app: App, status: str | None = None) -> Any:
    selector = "#attachments .att-chip" + (f"[data-status={status}]" if status else "")
    return app.page.locator(selector)


def wait_ready(app: App, count: int) -> None:
    try:
        wait_until(lambda: chips(app, "ready").count() == count, timeout=60)
    except AssertionError:
        raise AssertionError(f"chips: {chips(app).all_inner_texts()}; console: {app.console[-5:]}") from None


def user_blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    messages = [m for m in request["body"]["messages"] if m["role"] == "user"]
    content = messages[-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def run_py(app: App, code: str) -> Any:
    return app.page.evaluate("async (code) => (await window.pyAgent.ready).pyodide.runPythonAsync(code)", code)


def workspace_files(app: App, session_id: str) -> dict[str, bytes]:
    raw = run_py(
        app,
        f"""
import base64, json
from py_agent.browser.workspace import open_page_workspace
_w = await open_page_workspace({session_id!r})
json.dumps({{f.path: base64.b64encode(f.to_bytes()).decode() for f in _w.files()}})
""",
    )
    return {path: base64.b64decode(value) for path, value in json.loads(raw).items()}


# ---- tests --------------------------------------------------------------------------------------


def test_images_by_picker_paste_and_drop_reach_a_vision_model_as_image_blocks(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    jpeg, png, gif = image_bytes("JPEG"), image_bytes("PNG", color=(30, 160, 60)), image_bytes("GIF", (120, 90))
    attach_by_picker(app, [("photo.jpg", jpeg, "image/jpeg")])
    paste_files(app, [("image.png", png, "image/png")])
    drop_files(app, [("anim.gif", gif, "image/gif")])
    wait_ready(app, 3)
    assert page.locator("#attachments img.att-thumb").count() == 3
    assert "can't see images" not in (page.locator("#attach-notice").text_content() or "")
    send(app, "What do these show?")

    assert len(mock.requests) == 1
    blocks = user_blocks(mock.requests[0])
    images = [b for b in blocks if b["type"] == "image"]
    assert [b["source"]["media_type"] for b in images] == ["image/jpeg", "image/png", "image/png"]
    assert images[0]["source"]["data"] == base64.b64encode(jpeg).decode()  # small enough: sent as it is
    assert images[1]["source"]["data"] == base64.b64encode(png).decode()
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert texts[0] == "What do these show?"
    assert texts[1] == '<file name="uploads/photo.jpg"></file>' and texts[3] == '<file name="uploads/anim.gif"></file>'
    assert texts[2].startswith('<file name="uploads/pasted-image-')
    # Sent: the chips are gone, the transcript shows tiles that open the file in Files.
    assert chips(app).count() == 0
    tiles = page.locator("#transcript .msg.user .msg-attachments .att-tile")
    assert tiles.count() == 3 and page.locator("#transcript .msg.user img.att-thumb").count() == 3
    assert app.user_texts()[-1] == "What do these show?"
    tiles.first.click()
    page.locator("#side-panel").wait_for(state="visible", timeout=30_000)
    files = workspace_files(app, app.current_session_id())
    assert files["uploads/photo.jpg"] == jpeg and files["uploads/anim.gif"] == gif
    page.locator("#side-panel-close").click()


def test_a_large_image_is_scaled_in_the_page_with_pi_s_note(app: App, mock: MockProviderServer) -> None:
    from PIL import Image

    start(app, mock, "mock vision", "Mock Vision")
    attach_by_picker(app, [("wide.bmp", image_bytes("BMP", (3000, 1500)), "image/bmp")])
    wait_ready(app, 1)
    send(app, "Look at this")
    blocks = user_blocks(mock.requests[0])
    image = next(b for b in blocks if b["type"] == "image")["source"]
    assert image["media_type"] in ("image/png", "image/jpeg")
    sent = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    assert sent.size == (2000, 1000)
    assert blocks[1]["text"] == (
        '<file name="uploads/wide.bmp">[Image: original 3000x1500, displayed at 2000x1000. '
        "Multiply coordinates by 1.50 to map to original image.]</file>"
    )


def test_a_model_without_image_input_gets_the_notice_and_no_request(app: App, mock: MockProviderServer) -> None:
    page = app.page
    start(app, mock, "mock text", "Mock Text")
    attach_by_picker(app, [("chart.png", image_bytes("PNG"), "image/png")])
    wait_ready(app, 1)
    notice = page.locator("#attach-notice")
    assert "Mock Text can't see images; it will be told an image was omitted." in (notice.text_content() or "")
    app.type_and_enter("Describe the chart")
    page.locator("#attach-send-anyway").wait_for()
    page.wait_for_timeout(500)
    assert mock.requests == []
    assert page.locator("#input").input_value() == "Describe the chart" and chips(app, "ready").count() == 1

    page.locator("#attach-send-anyway").click()
    page.locator("#transcript .msg.assistant:not(.streaming)").first.wait_for(timeout=60_000)
    app.wait_idle()
    assert len(mock.requests) == 1
    body = json.dumps(mock.requests[0]["body"])
    assert "image_url" not in body and "uploads/chart.png" in body


def test_documents_reach_the_request_as_text_and_the_python_tool_reads_the_csv(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    pdf, docx, xlsx = pdf_bytes(), docx_bytes(), xlsx_bytes()
    attach_by_picker(
        app,
        [
            ("report.pdf", pdf, "application/pdf"),
            ("plan.docx", docx, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            ("sales.xlsx", xlsx, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
            ("scores.csv", CSV.encode(), "text/csv"),
        ],
    )
    wait_ready(app, 4)
    code = "import csv\nrows = list(csv.DictReader(open('/workspace/uploads/scores.csv')))\nprint('mean', sum(int(r['score']) for r in rows) / len(rows))"
    mock.script(
        [
            {"tool_calls": [{"id": "py1", "name": "python", "arguments": {"title": "Scores", "code": code}}]},
            {"text": "The mean score is 89."},
        ]
    )
    app.type_and_enter("Summarise these")
    page.locator("#transcript .msg.assistant", has_text="The mean score is 89.").wait_for(timeout=120_000)
    app.wait_idle(timeout=60_000)

    texts = [b["text"] for b in user_blocks(mock.requests[0]) if b["type"] == "text"]
    assert texts[0] == "Summarise these"
    assert texts[1].startswith('<file name="uploads/report.pdf">\n<page number="1">\nQuarterly revenue grew 12 percent')
    assert '<page number="2">\nPage two: costs fell in the South region.\n</page>' in texts[1]
    assert texts[2].startswith('<file name="uploads/plan.docx">\nMigration plan') and "three phases" in texts[2]
    assert (
        texts[3]
        == '<file name="uploads/sales.xlsx">\n<sheet name="Sales">\nregion,total\nNorth,120\nSouth,80\n</sheet>\n</file>'
    )
    assert texts[4] == f'<file name="uploads/scores.csv">\n{CSV}\n</file>'
    files = workspace_files(app, app.current_session_id())
    assert files["uploads/report.pdf"] == pdf and files["uploads/plan.docx"] == docx
    assert files["uploads/sales.xlsx"] == xlsx and files["uploads/scores.csv"] == CSV.encode()
    # The python tool ran on the attached CSV in /workspace.
    result = json.dumps(mock.requests[1]["body"]["messages"][-1])
    assert "mean 89.0" in result
    assert page.locator("#transcript .msg.user .att-tile").count() == 4
    assert page.evaluate("() => window.__csp") == []  # the page's policy held: scripts from the site only


def test_errors_show_on_the_chip_and_nothing_is_lost(app: App, mock: MockProviderServer) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    page.locator("#input").fill("Keep this text")
    attach_by_picker(
        app,
        [
            ("notes.txt", b"plain notes", "text/plain"),
            ("slides.ppt", b"\xd0\xcf\x11\xe0 old", "application/vnd.ms-powerpoint"),
            ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "application/pdf"),
            ("locked.pdf", locked_pdf_bytes(), "application/pdf"),
        ],
    )
    wait_until(lambda: chips(app, "error").count() == 3 and chips(app, "ready").count() == 1, timeout=60)
    errors = page.locator("#attachments .att-error").all_inner_texts()
    assert errors[0] == (
        "slides.ppt: this file type isn't supported (application/vnd.ms-powerpoint). "
        "Attach images, PDF, DOCX, XLSX, CSV or text."
    )
    assert errors[1].startswith("broken.pdf couldn't be read as PDF")
    assert errors[2] == "locked.pdf is password-protected."
    page.locator("#input").press("Enter")
    assert "Remove the attachments that show an error" in (page.locator("#attach-notice").text_content() or "")
    assert mock.requests == [] and page.locator("#input").input_value() == "Keep this text"
    for name in ("slides.ppt", "broken.pdf", "locked.pdf"):
        page.get_by_role("button", name=f"Remove {name}").click()
    assert chips(app).count() == 1
    send(app, "Keep this text")
    assert len(mock.requests) == 1 and "plain notes" in json.dumps(mock.requests[0]["body"])


def test_long_pasted_text_becomes_an_attachment_and_the_size_limit_is_a_setting(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    long_text = "A line of a long log that the user pasted.\n" * 600  # 25,800 characters
    page.locator("#input").fill("Why does this fail? ")
    page.evaluate(
        """(text) => {
          const dt = new DataTransfer();
          dt.setData("text/plain", text);
          const input = document.querySelector("#input");
          input.focus();
          input.setRangeText(text, input.value.length, input.value.length, "end");  // what the paste inserts
          input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
        }""",
        long_text,
    )
    assert "You pasted 25,800 characters." in (page.locator("#attach-notice").text_content() or "")
    page.get_by_role("button", name="Attach it as a file").click()
    wait_ready(app, 1)
    assert page.locator("#input").input_value() == "Why does this fail? "
    assert (chips(app).first.get_attribute("data-name") or "").startswith("pasted-")
    page.get_by_role("button", name=f"Remove {chips(app).first.get_attribute('data-name')}").click()

    # Settings → Attachments: a lower limit applies to the next file, on its chip.
    page.locator("#open-settings").click()
    page.locator("#settings-tab-attachments").click()
    page.locator("#attachment-max-mb").fill("1")
    page.locator("#attachment-max-mb").dispatch_event("change")
    page.locator("#attachment-max-note", has_text="Saved.").wait_for()
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")
    attach_by_picker(app, [("big.txt", b"x" * (2 * 1024 * 1024), "text/plain")])
    wait_until(lambda: chips(app, "error").count() == 1)
    assert page.locator("#attachments .att-error").inner_text() == "big.txt is 2 MB; the limit is 1 MB."
    page.get_by_role("button", name="Remove big.txt").click()
    app.py("set_setting", key="attachmentMaxMb", value=20)
    page.evaluate("() => { window.pyAgentApp.init && (window.pyAgentApp.init.settings.attachmentMaxMb = 20); }")
    assert mock.requests == []


@pytest.fixture(scope="module")
def pi_modules() -> Path:
    """pi's coding agent, installed once with npm into .cache/ (its SessionManager reads our export)."""
    modules = CACHE / "node_modules"
    if not (modules / "@earendil-works" / "pi-coding-agent" / "package.json").exists():
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed to install pi's coding agent for this test"
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "package.json").write_text('{"name": "pi-reader", "private": true, "type": "module"}\n')
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                PI_PACKAGE,
            ],
            cwd=CACHE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    return modules


def test_pi_reads_the_export_and_import_brings_back_attachments_and_files(
    app: App, mock: MockProviderServer, pi_modules: Path, tmp_path: Path
) -> None:
    page = app.page
    start(app, mock, "mock vision", "Mock Vision")
    png = image_bytes("PNG", (64, 48))
    attach_by_picker(app, [("dot.png", png, "image/png"), ("plan.docx", docx_bytes(), "application/octet-stream")])
    wait_ready(app, 2)
    send(app, "Keep these")
    session_id = app.current_session_id()
    exported = app.py("export_session")["text"]
    path = tmp_path / "export.jsonl"
    path.write_text(exported, encoding="utf-8")

    done = subprocess.run(
        ["node", str(PI_CONTEXT), str(pi_modules), str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout)["messages"]
    user = next(m for m in messages if m["role"] == "user")
    assert user["content"][0] == {"type": "text", "text": "Keep these"}
    assert {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"} in user["content"]
    assert any("three phases" in b.get("text", "") for b in user["content"])

    page.locator("#import-file").set_input_files(str(path))
    wait_until(lambda: app.current_session_id() != session_id, timeout=30)
    page.locator("#transcript .msg.user .att-tile").first.wait_for()
    assert page.locator("#transcript .msg.user .att-tile").count() == 2
    assert page.locator("#transcript .msg.user img.att-thumb").count() == 1
    files = workspace_files(app, app.current_session_id())
    assert files["uploads/dot.png"] == png and "uploads/plan.docx" in files


def test_a_custom_model_described_as_taking_images_gets_them_and_shows_its_context_window(
    app: App, mock: MockProviderServer
) -> None:
    page = app.page
    page.locator("#open-settings").click()
    page.locator("[role=tab]", has_text="Custom providers").click()
    page.locator("#add-provider").click()
    page.locator("#provider-kind").select_option("openai-compatible")
    page.locator("#provider-name").fill("Gateway")
    page.locator("#provider-url").fill(f"{mock.url}/v1")
    page.locator("#provider-models").fill("gw-vision")
    page.locator("#provider-models").dispatch_event("change")
    box = page.locator("details.model-details")
    box.locator("summary").click()
    detail = box.locator("fieldset", has_text="gw-vision")
    detail.get_by_label("Takes images").check()
    window = detail.get_by_label("Context window (tokens)")
    window.fill("64000")
    window.dispatch_event("change")
    page.get_by_role("button", name="Save provider").click()
    # The mock server lists no models: saved with the one typed, and said so.
    page.get_by_role("button", name="Back to the list").click()
    page.locator(".provider-card", has_text="Gateway").wait_for()
    page.keyboard.press("Escape")
    page.locator("dialog[open]").wait_for(state="detached")
    app.py("save_key", provider="Gateway", key="sk-mock-gateway-key-0003", remember=True)

    app.new_chat()
    page.locator("#model-button").click()
    page.locator("#model-search").fill("gw-vision")
    row = page.locator(".model-row", has_text="gw-vision")
    row.wait_for()
    assert "64K context" in row.inner_text()
    page.wait_for_timeout(150)  # the search is debounced
    page.locator("#model-search").press("Enter")
    page.locator("#model-button", has_text="gw-vision").wait_for()
    mock.reset()
    png = image_bytes("PNG", color=(10, 120, 200))
    attach_by_picker(app, [("gateway.png", png, "image/png")])
    wait_ready(app, 1)
    assert "can't see images" not in (page.locator("#attach-notice").text_content() or "")
    send(app, "What is in it?")
    content = [m for m in mock.requests[0]["body"]["messages"] if m["role"] == "user"][-1]["content"]
    images = [b for b in content if b["type"] == "image_url"]
    assert [b["image_url"]["url"] for b in images] == [f"data:image/png;base64,{base64.b64encode(png).decode()}"]
    app.py("delete_custom_provider", name="Gateway")


def hyphenated_pdf_bytes() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    for line in ("The robot arm's manip-", "ulation of small parts is a well-known", "Problem-solving task."):
        pdf.cell(text=line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_a_word_hyphenated_across_a_pdf_line_end_is_one_word_and_real_hyphens_stay(
    app: App, mock: MockProviderServer
) -> None:
    start(app, mock, "mock vision", "Mock Vision")
    attach_by_picker(app, [("manual.pdf", hyphenated_pdf_bytes(), "application/pdf")])
    wait_ready(app, 1)
    send(app, "Read this")
    blocks = user_blocks(mock.requests[0])
    text = next(b["text"] for b in blocks if b["type"] == "text" and "manual.pdf" in b["text"])
    assert "The robot arm's manipulation of small parts is a well-known\nProblem-solving task." in text, text
