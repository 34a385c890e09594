"""The switches the tests and benchmarks start Chromium with keep Playwright's own.

Chromium keeps only the last `--disable-features` of its command line, and ours (which adds the
heap profiler that crashes renderers running Pyodide: buildsys/config.py) comes after
Playwright's: so ours has to name every feature Playwright's does, or a Playwright upgrade would
quietly turn one of them back on.
"""

from __future__ import annotations

import re
from pathlib import Path

import build

SWITCH_SOURCES = ("lib/coreBundle.js", "lib/server/chromium/chromiumSwitches.js")


def playwright_disabled_features() -> set[str]:
    import playwright

    package = Path(playwright.__file__).parent / "driver" / "package"
    for name in SWITCH_SOURCES:
        source = package / name
        if source.exists():
            found = re.search(r"disabledFeatures = \[(.*?)\]", source.read_text(encoding="utf-8"), re.S)
            if found:
                return set(re.findall(r'^\s*"([A-Za-z]+)"', found.group(1), re.M))
    raise AssertionError(f"Playwright's list of disabled features is in none of {SWITCH_SOURCES}: update this test")


def our_disabled_features() -> list[str]:
    switches = [arg for arg in build.CHROMIUM_ARGS if arg.startswith("--disable-features=")]
    assert len(switches) == 1, switches  # Chromium would keep only the last
    return switches[0].removeprefix("--disable-features=").split(",")


def test_our_disabled_features_include_playwrights() -> None:
    theirs = playwright_disabled_features()
    assert len(theirs) >= 10  # the parse found the list, not a fragment of it
    assert theirs <= set(our_disabled_features()), sorted(theirs - set(our_disabled_features()))
