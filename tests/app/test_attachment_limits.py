"""The page's checks of a file before it is read (web/attachments/zip.js, inspect.js), run in Node on
files made here; and the limits' one table, as the page and Python hold it.

- a DOCX or XLSX is refused from its central directory when it declares too much (size, ratio,
  parts), and refused while inflating when it holds more than it declares (a lying size); a
  good one comes back as the same ZIP stored without compression;
- an image's size is read from its header (PNG, JPEG after EXIF, GIF, WebP lossy, lossless and
  extended, BMP), and a claim over the limit is refused naming it;
- the Files panel's check refuses the same files.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from py_agent.app.attachments import LIMIT_SETTINGS, attachments_plugin
from py_agent.testing.hostile_files import huge_png, zip_bomb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RUNNER = HERE / "inspect_files.mjs"
MB = 1024 * 1024


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("Node.js is missing (the project's JavaScript tooling needs it)")
    return found


def inspect(*jobs: dict[str, Any]) -> list[dict[str, Any]]:
    jobs_json = json.dumps([{k: str(v) if isinstance(v, Path) else v for k, v in job.items()} for job in jobs])
    done = subprocess.run([node(), str(RUNNER), jobs_json], capture_output=True, text=True, timeout=120, check=True)
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


def docx_bytes() -> bytes:
    from docx import Document

    document = Document()
    document.add_paragraph("The migration plan has three phases.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes(rows: int = 3) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for n in range(rows):
        sheet.append([f"row {n}", n])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def image(fmt: str, size: tuple[int, int], **options: Any) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(out, format=fmt, **options)
    return out.getvalue()


def test_the_page_and_python_hold_the_same_limits_and_python_owns_their_settings() -> None:
    script = (
        "import { LIMITS, LIMIT_SETTINGS } from './web/attachments/limits.js';"
        "console.log(JSON.stringify({ LIMITS, LIMIT_SETTINGS }));"
    )
    done = subprocess.run(
        [node(), "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    page = json.loads(done.stdout)
    mirrored = {s["key"]: (page["LIMITS"][s["limit"]], s["min"], s["max"]) for s in page["LIMIT_SETTINGS"]}
    assert mirrored == LIMIT_SETTINGS
    assert set(attachments_plugin().settings) == set(LIMIT_SETTINGS)


def test_documents_are_refused_from_their_directory_or_while_inflating_and_good_ones_come_back_stored(
    tmp_path: Path,
) -> None:
    good_docx, good_xlsx = tmp_path / "plan.docx", tmp_path / "sales.xlsx"
    good_docx.write_bytes(docx_bytes())
    good_xlsx.write_bytes(xlsx_bytes(20_000))  # a sheet of more than 512 KB unpacked
    bomb = zip_bomb(tmp_path / "bomb.docx")
    liar = zip_bomb(tmp_path / "liar.xlsx", "xlsx", inflated=300 * MB, declared=1000)
    small_bomb = zip_bomb(tmp_path / "small.docx", inflated=8 * MB)
    answers = inspect(
        {"op": "unpack", "path": good_docx, "name": "plan.docx", "out": tmp_path / "plan.stored"},
        {"op": "unpack", "path": good_xlsx, "name": "sales.xlsx", "out": tmp_path / "sales.stored"},
        {"op": "directory", "path": bomb, "name": "bomb.docx"},
        {"op": "unpack", "path": liar, "name": "liar.xlsx", "out": tmp_path / "liar.stored"},
        {"op": "directory", "path": small_bomb, "name": "small.docx"},
        {"op": "directory", "path": good_docx, "name": "plan.docx", "limits": {"maxZipEntries": 3}},
        {"op": "directory", "path": good_docx, "name": "plan.docx", "limits": {"maxUnpackedMb": 0.01}},
        {"op": "directory", "path": tmp_path / "plan.stored", "name": "not-a-zip.docx", "limits": {}},
    )
    assert answers[0] == {"ok": True} and answers[1] == {"ok": True}
    for original, stored in ((good_docx, tmp_path / "plan.stored"), (good_xlsx, tmp_path / "sales.stored")):
        with zipfile.ZipFile(original) as before, zipfile.ZipFile(stored) as after:
            assert after.namelist() == before.namelist()
            assert all(info.compress_type == zipfile.ZIP_STORED for info in after.infolist())
            assert all(after.read(name) == before.read(name) for name in before.namelist())
            assert after.testzip() is None  # the CRCs copied from the directory are the contents'
    assert answers[2]["refused"] == "bomb.docx unpacks to 400 MB; the limit is 20 MB (Settings → Attachments)."
    assert answers[3]["refused"] == (
        "liar.xlsx: its part xl/worksheets/sheet1.xml unpacks to more than it declares (a zip bomb?)."
    )
    assert not (tmp_path / "liar.stored").exists()
    assert answers[4]["refused"] == (
        "small.docx: its part word/document.xml unpacks from 0 MB to 8 MB, more than 200 times its size "
        "(a zip bomb?); the limit is 200 to 1."
    )
    parts = len(zipfile.ZipFile(good_docx).namelist())
    assert answers[5]["refused"] == f"plan.docx has {parts} parts; the limit is 3."
    assert answers[6]["refused"].startswith("plan.docx unpacks to 0")
    assert "the limit is 0.01 MB" in answers[6]["refused"]
    assert answers[7] == {"ok": True, "parts": parts}  # the stored copy is a ZIP as good as the original


def test_image_sizes_are_read_from_their_headers_before_any_decoding(tmp_path: Path) -> None:
    from PIL import Image

    exif = Image.Exif()
    exif[0x010E] = "x" * 20_000  # a long EXIF segment before the JPEG's SOF
    files = {
        "a.png": image("PNG", (640, 480)),
        "b.jpg": image("JPEG", (1201, 803), exif=exif.tobytes()),
        "c.gif": image("GIF", (77, 55)),
        "d.webp": image("WEBP", (300, 200), quality=80),
        "e.webp": image("WEBP", (301, 211), lossless=True),
        "f.bmp": image("BMP", (33, 44)),
        "huge.png": huge_png(30000, 30000),
        "wide.jpg": image("JPEG", (9000, 6000), quality=10),
        "notes.heic": b"\x00\x00\x00\x18ftypheic" + bytes(64),
    }
    jobs = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        jobs.append({"op": "image", "path": tmp_path / name, "name": name})
    answers = {name: answer for name, answer in zip(files, inspect(*jobs), strict=True)}
    sizes = {name: (a.get("format"), a.get("width"), a.get("height")) for name, a in answers.items() if a.get("ok")}
    assert sizes == {
        "a.png": ("PNG", 640, 480),
        "b.jpg": ("JPEG", 1201, 803),
        "c.gif": ("GIF", 77, 55),
        "d.webp": ("WebP", 300, 200),
        "e.webp": ("WebP", 301, 211),
        "f.bmp": ("BMP", 33, 44),
    }
    assert answers["huge.png"]["refused"] == (
        "huge.png is 30000 x 30000 pixels (900 megapixels, 3.4 GB decoded); "
        "the limit is 50 megapixels (Settings → Attachments)."
    )
    assert answers["wide.jpg"]["refused"].startswith("wide.jpg is 9000 x 6000 pixels (54 megapixels, 206 MB decoded)")
    assert answers["notes.heic"]["refused"] == (
        "notes.heic: this browser can't decode the image (HEIC?). Convert it to JPEG or PNG."
    )


def test_the_files_panel_refuses_the_same_files(tmp_path: Path) -> None:
    zip_bomb(tmp_path / "bomb.xlsx", "xlsx")
    archive = zip_bomb(tmp_path / "bomb.zip")  # a plain archive is the user's to keep: nothing unpacks it
    (tmp_path / "huge.png").write_bytes(huge_png())
    (tmp_path / "plain.txt").write_text("notes")
    answers = inspect(
        *(
            {"op": "upload", "path": tmp_path / name, "name": name}
            for name in ("bomb.xlsx", "huge.png", "plain.txt", archive.name)
        )
    )
    assert [a["refused"] for a in answers] == [
        "bomb.xlsx unpacks to 400 MB; the limit is 20 MB (Settings → Attachments).",
        "huge.png is 30000 x 30000 pixels (900 megapixels, 3.4 GB decoded); the limit is 50 megapixels "
        "(Settings → Attachments).",
        None,
        None,
    ]
