"""The browser tests' own diagnostics: a renderer that crashes leaves its reason in the failed test's report.

A crash in CI ("Target crashed") is otherwise only a Playwright error with no cause; conftest.py keeps
Chromium's stderr per module and adds its telling lines to a failed test's report.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_ARGS, chromium_log_excerpt, crash_causes, last_steps
from minidumps import minidumps_since


@pytest.mark.crashes
def test_a_crashed_renderer_is_in_the_log_excerpt(browser: Any, request: pytest.FixtureRequest) -> None:
    log = request.module.__chromium_log__
    assert isinstance(log, Path)
    context = browser.new_context()
    started = time.time() - 1  # file times may be a little behind time.time()
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
    # The signal's crash leaves its minidump (what a report adds when the log names no cause).
    while time.monotonic() < deadline and not minidumps_since(started):
        time.sleep(0.2)
    assert any(dump.signal == "SIGSEGV" and dump.fault_address == 0 for dump in minidumps_since(started))


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


def renderer_command_lines(user_data_dir: Path) -> list[str]:
    """The command lines of the renderers of the Chromium whose profile is `user_data_dir` (a child
    process rewrites its own as one line, so each is read as text, arguments separated by spaces)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().decode(errors="replace").replace("\0", " ") + " "
        except OSError:
            continue  # ended meanwhile
        if " --type=renderer " in line and f" --user-data-dir={user_data_dir} " in line:
            found.append(line)
    return found


# What turns the heap profiler on for every renderer (Chromium otherwise picks some sessions at random).
HEAP_PROFILER_ALWAYS = "--enable-features=HeapProfilerReporting:stable-probability/1/nonstable-probability/1"


@pytest.mark.parametrize("ours", [True, False], ids=["with our switches", "without them"])
def test_our_switches_keep_the_heap_profiler_out_of_renderers(
    browser: Any, chromium_path: str, tmp_path: Path, ours: bool
) -> None:
    # The profiler's stack walk crashes renderers running Pyodide (docs/web-architecture.md, "A crash
    # that is Chromium's"); the tests' and benchmarks' switches keep it off even where Chromium
    # would pick every session.
    args = [arg for arg in CHROMIUM_ARGS if ours or not arg.startswith("--disable-features=")]
    context = browser.browser_type.launch_persistent_context(
        tmp_path, executable_path=chromium_path, args=[*args, HEAP_PROFILER_ALWAYS], headless=True
    )
    try:
        for _ in range(3):
            context.new_page().set_content("<p>a renderer</p>")
        renderers = renderer_command_lines(tmp_path)
    finally:
        context.close()
    assert renderers
    profiled = [line for line in renderers if " --subproc-heap-profiling " in line]
    assert (profiled == []) if ours else profiled
