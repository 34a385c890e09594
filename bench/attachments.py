"""Attachments: a 10 MB PDF attached while a reply streams, and extraction speed per MB.

Run: ``python3 build.py bench attachments`` (or ``.venv/bin/python bench/attachments.py`` after a
build; needs the test extra's fpdf2, python-docx and openpyxl). Rewrites the "attachments" section
of BENCHMARKS.md.

The chat app (a copy of static/ on a plain static server, headless Chromium) streams a long reply
from the mock provider server; meanwhile a 10 MB PDF (100 pages, each with a line of text and a
photo-like image, made here with fpdf2, fetched into the page beforehand) is dropped on the chat. The
page reads it in its extraction worker (pdf.js, web/attachments/extract-worker.js). In the page we
record PerformanceObserver "longtask" entries (main-thread tasks over 50 ms) and the longest gap
between animation frames from the attach to the ready chip. Then, with nothing streaming, the time
from attach to ready chip for a PDF, a DOCX and an XLSX gives the extraction speed per MB.
"""

from __future__ import annotations

import io
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _browser  # noqa: E402
import _report  # noqa: E402

from py_agent.testing.mock_server import MockProviderServer  # noqa: E402

RUNS = int(os.environ.get("ATTACHMENTS_BENCH_RUNS", "3"))
TARGET_MB = 10


def noise_jpeg(seed: int, side: int = 330) -> bytes:
    from PIL import Image

    rng = random.Random(seed)
    image = Image.frombytes("RGB", (side, side), bytes(rng.getrandbits(8) for _ in range(side * side * 3)))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=92)
    return out.getvalue()


def big_pdf(target_mb: float = TARGET_MB) -> bytes:
    """About ``target_mb`` MB: pages of text, each with an incompressible image (a scan-like PDF with a text layer)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    page = 0
    size = 0
    while size < target_mb * 1024 * 1024:
        page += 1
        pdf.add_page()
        pdf.multi_cell(w=0, text=f"Page {page}. " + "Revenue by region and quarter, with notes on costs. " * 20)
        image = noise_jpeg(page)
        pdf.image(io.BytesIO(image), x=20, y=80, w=120)
        size += len(image) + 1500
    return bytes(pdf.output())


def text_pdf(pages: int = 400) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for n in range(pages):
        pdf.add_page()
        pdf.multi_cell(w=0, text=f"Page {n + 1}. " + "The quick brown fox jumps over the lazy dog. " * 60)
    return bytes(pdf.output())


def docx_file(paragraphs: int = 3000) -> bytes:
    from docx import Document

    document = Document()
    for n in range(paragraphs):
        document.add_paragraph(f"Paragraph {n}: the migration plan has three phases and a rollback step.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_file(rows: int = 20_000) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Sales"
    sheet.append(["region", "quarter", "total", "note"])
    for n in range(rows):
        sheet.append([f"R{n % 17}", f"Q{n % 4 + 1}", n * 3, "steady"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


MONITOR = """() => {
  const m = window.__bench = { longtasks: [], maxGap: 0, done: false, start: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) m.longtasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask" });
  let last = performance.now();
  const frame = () => {
    const now = performance.now();
    if (m.start) m.maxGap = Math.max(m.maxGap, now - last);
    last = now;
    if (!m.done) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}"""


TYPES = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def load_files(page: Any, names: list[str]) -> None:
    """Fetch the files into the page beforehand (as Files), so that attaching them measures the app only."""
    for name in names:
        page.evaluate(
            """async ([name, type]) => {
              const blob = await (await fetch(`bench-files/${name}`)).blob();
              (window.__files ??= {})[name] = new File([blob], name, { type });
            }""",
            [name, TYPES[Path(name).suffix]],
        )


def attach(page: Any, path: Path) -> float:
    """Drop ``path`` (fetched into the page beforehand) on the chat; ms from the drop to the ready chip."""
    page.evaluate(
        """(name) => {
          window.__bench && (window.__bench.start = performance.now());
          window.__t0 = performance.now();
          const dt = new DataTransfer();
          dt.items.add(window.__files[name]);
          const zone = document.querySelector("#scroller");
          for (const type of ["dragenter", "dragover", "drop"])
            zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
        }""",
        path.name,
    )
    page.locator("#attachments .att-chip[data-status=ready], #attachments .att-chip[data-status=error]").first.wait_for(
        timeout=120_000
    )
    elapsed = float(page.evaluate("() => performance.now() - window.__t0"))
    error = page.locator("#attachments .att-error")
    if error.count():
        raise RuntimeError(f"{path.name}: {error.first.inner_text()}")
    return elapsed


def clear(page: Any) -> None:
    while page.locator("#attachments .att-remove").count():
        page.locator("#attachments .att-remove").first.click()


def start_stream(page: Any, mock: MockProviderServer) -> None:
    page.locator("#new-chat").click()
    page.locator("#session-title", has_text="New chat").wait_for()
    page.locator("html:not([data-switching])").wait_for(state="attached")  # the new chat is open
    mock.reset()
    mock.script([{"text": "Streaming while a file is read. " * 400, "chunk_size": 6, "delay_ms": 4}])
    page.evaluate(MONITOR)
    page.locator("#input").fill("Stream a long reply")
    page.locator("#input").press("Enter")
    page.locator("#transcript .msg.assistant.streaming").first.wait_for(timeout=60_000)
    page.wait_for_timeout(300)


def streaming_only(page: Any, mock: MockProviderServer, window_ms: float) -> float:
    """The control: the longest main-thread task over ``window_ms`` of streaming, nothing attached."""
    start_stream(page, mock)
    started = float(page.evaluate("() => (window.__bench.start = performance.now())"))
    page.wait_for_timeout(window_ms)
    result: dict[str, Any] = page.evaluate("() => { window.__bench.done = true; return window.__bench; }")
    end = started + window_ms
    during = [d for start, d in result["longtasks"] if start + d >= started and start <= end]
    page.locator("#stop-button").wait_for(state="hidden", timeout=120_000)
    return max(during, default=0.0)


def while_streaming(page: Any, mock: MockProviderServer, pdf: Path) -> dict[str, float]:
    start_stream(page, mock)
    streaming_at_start = page.locator("#stop-button").is_visible()
    elapsed = attach(page, pdf)
    streaming_at_end = page.locator("#stop-button").is_visible()
    result: dict[str, Any] = page.evaluate("() => { window.__bench.done = true; return window.__bench; }")
    end = result["start"] + elapsed
    during = [d for start, d in result["longtasks"] if start + d >= result["start"] and start <= end]
    page.locator("#stop-button").wait_for(state="hidden", timeout=120_000)
    clear(page)
    return {
        "ready_ms": elapsed,
        "longest_task_ms": max(during, default=0.0),
        "long_tasks": float(len(during)),
        "max_frame_gap_ms": result["maxGap"],
        "streamed_throughout": float(streaming_at_start and streaming_at_end),
    }


def main() -> None:
    load_before = _browser.load_average()
    with tempfile.TemporaryDirectory(prefix="py-agent-bench-attachments-") as tmp, MockProviderServer() as mock:
        folder = Path(tmp)
        files = {
            "big.pdf": big_pdf(),
            "text.pdf": text_pdf(),
            "plan.docx": docx_file(),
            "sales.xlsx": xlsx_file(),
        }
        site = _browser.site_copy(folder / "site")
        (site / "bench-files").mkdir()
        for name, data in files.items():
            (folder / name).write_bytes(data)
            (site / "bench-files" / name).write_bytes(data)
        sizes = {name: len(data) / (1024 * 1024) for name, data in files.items()}
        server, base = _browser.serve(site)
        streaming: list[dict[str, float]] = []
        speeds: dict[str, list[float]] = {name: [] for name in files}
        times: dict[str, list[float]] = {name: [] for name in files}
        try:
            with sync_playwright() as playwright:
                browser = _browser.launch(playwright)
                version = browser.version
                context = browser.new_context(viewport={"width": 1280, "height": 860})
                page = _browser.open_app(context, base)
                _browser.use_mock_model(page, mock.url)
                load_files(page, list(files))
                attach(page, folder / "plan.docx")  # warm-up: the workers' first start
                clear(page)
                for i in range(RUNS):
                    run = while_streaming(page, mock, folder / "big.pdf")
                    run["control_longest_task_ms"] = streaming_only(page, mock, run["ready_ms"])
                    streaming.append(run)
                    print(
                        f"run {i + 1}/{RUNS}: 10 MB PDF ready in {run['ready_ms']:.0f} ms while streaming; "
                        f"longest task {run['longest_task_ms']:.0f} ms, longest frame gap {run['max_frame_gap_ms']:.0f} ms",
                        flush=True,
                    )
                    for name in files:
                        ms = attach(page, folder / name)
                        clear(page)
                        speeds[name].append(sizes[name] / (ms / 1000))
                        times[name].append(ms)
                browser.close()
        finally:
            server.shutdown()
            server.server_close()

    def values(key: str) -> list[float]:
        return [r[key] for r in streaming]

    longest = max(values("longest_task_ms"))
    clean = sum(1 for v in values("longest_task_ms") if v <= 50)
    control = max(values("control_longest_task_ms"))
    rows = "\n".join(
        f"| {name} | {sizes[name]:.2f} MB | {_report.summary(times[name], 'ms', 0)} | "
        f"{_report.summary(speeds[name], 'MB/s', 2)} |"
        for name in files
    )
    body = f"""## Attachments

Machine: {_report.machine()}; Chromium {version}; 1-minute load average {load_before:.1f} before the
runs, {_browser.load_average():.1f} after.

A {sizes["big.pdf"]:.1f} MB PDF (pages of text, each with a photo-like image; made with fpdf2) is dropped
on the chat while the chat app streams a reply from the mock provider server, {RUNS} runs
(`bench/attachments.py`). Its text is extracted by pdf.js in the page's extraction worker
(`web/attachments/extract-worker.js`); the main thread only posts the file and shows the result.

| while a reply streams | median (min–max) |
|---|---|
| attach to ready chip (text extracted, bytes encoded) | {_report.summary(values("ready_ms"), "ms", 0)} |
| longest main-thread task (longtask entries; 0: none over 50 ms) | {_report.summary(values("longest_task_ms"), "ms", 0)} |
| main-thread tasks over 50 ms | {_report.summary(values("long_tasks"), "", 0)} |
| control: longest task over as long a time of streaming, nothing attached | {_report.summary(values("control_longest_task_ms"), "ms", 0)} |
| longest gap between animation frames | {_report.summary(values("max_frame_gap_ms"), "ms", 0)} |
| the reply streamed during the whole attach (1 = yes) | {_report.summary(values("streamed_throughout"), "", 0)} |

Target: no main-thread task over 50 ms while the PDF is read: longest {longest:.0f} ms over all runs —
{"met" if longest <= 50 else "not met"}.

Extraction speed, attach to ready chip with nothing streaming (size / time; the extraction worker
already running, its libraries loaded by the earlier files):

| file | size | attach to ready chip | speed |
|---|---|---|---|
{rows}

`text.pdf`: 400 pages of text only; `plan.docx`: 3,000 paragraphs; `sales.xlsx`:
20,000 rows of 4 columns. Speeds per MB depend on what a file holds: an image-heavy PDF is large for its
text, so it reads fast per MB; a spreadsheet's XML is compressed, so its MB hold much more to parse.
The first PDF also pays for loading pdf.js into the worker (1.7 MB of JavaScript to compile): that
is in the first run while streaming.

The machine is shared (other jobs ran meanwhile: see the load average above). The extraction worker
needs a core; when every core is busy the main thread's ordinary tasks wait for the CPU and stretch:
earlier runs of this script at a load average of 20–30 on these 2 cores saw tasks of 80–360 ms. Here,
{clean} of {RUNS} runs had no task over 50 ms while the PDF was read, and the streaming-only control
(no attachment at all) had tasks up to {control:.0f} ms.
Nothing of the attachment itself runs on the main thread: the file goes to the worker as a `File`, and
its bytes come back as a transferred buffer, decoded to base64 text only when the message is sent.
"""
    _report.write_section("attachments", body)
    print(body)


if __name__ == "__main__":
    main()
