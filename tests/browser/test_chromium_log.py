"""The browser tests' own diagnostics: a renderer that crashes leaves its reason in the failed test's report.

A crash in CI ("Target crashed") is otherwise only a Playwright error with no cause; conftest.py keeps
Chromium's stderr per module and adds its telling lines to a failed test's report.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import chromium_log_excerpt, crash_causes, last_steps


@pytest.mark.crashes
def test_a_crashed_renderer_is_in_the_log_excerpt(browser: Any, request: pytest.FixtureRequest) -> None:
    log = request.module.__chromium_log__
    assert isinstance(log, Path)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto("about:blank")
        # Chromium's own debug URL crashes the renderer on purpose.
        with pytest.raises(Exception, match=r"ERR_ABORTED|crashed"):
            page.goto("chrome://crash", timeout=10_000)
        with pytest.raises(Exception, match="crashed"):
            page.evaluate("1 + 1")
    finally:
        context.close()
    deadline = time.monotonic() + 10
    excerpt = ""
    while time.monotonic() < deadline and "Intentionally crashing" not in excerpt:
        time.sleep(0.2)
        excerpt = chromium_log_excerpt(log)
    assert "Intentionally crashing" in excerpt
    # A machine without a desktop session logs dbus errors at every start: those are left out.
    assert "dbus" not in excerpt
    # The report's summary: the cause, and what the test was doing (its Playwright steps).
    assert any("Intentionally crashing" in cause for cause in crash_causes(log))
    assert 'navigating to "chrome://crash"' in last_steps(log)
    assert "pw:api" not in excerpt


def test_the_kinds_of_out_of_memory_are_named(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text(
        "[1:1:ERROR:dbus/bus.cc] noise\n"
        "[pid=9][err] <--- Last few GCs --->\n"
        "[pid=9][err] [12:12:FATAL:v8/src/utils/allocation.cc:99] V8 process OOM (Zone). Current memory usage: 3 GB\n"
        "[pid=9][err] Fatal process out of memory: Failed to reserve virtual memory for CodeRange\n"
    )
    assert crash_causes(log) == [
        "FATAL:v8/src/utils/allocation.cc:99] V8 process OOM (Zone). Current memory usage: 3 GB",
        "Fatal process out of memory: Failed to reserve virtual memory for CodeRange",
    ]
    # Only the part of the log after `start` (this test's).
    assert crash_causes(log, start=len(log.read_bytes())) == []
