"""examples/pyodide_page: a page of one's own runs py_agent on Pyodide from the built site's files."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import build

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "examples" / "pyodide_page" / "index.html"


@pytest.fixture(scope="module")
def served(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The layout the example expects: examples/pyodide_page/ beside static/.
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(built_site, root / "static")
    (root / "examples" / "pyodide_page").mkdir(parents=True)
    shutil.copy(PAGE, root / "examples" / "pyodide_page" / "index.html")
    base, stop = build.serve_in_background(root)
    yield base
    stop()


def test_the_page_is_short() -> None:
    assert len(PAGE.read_text(encoding="utf-8").splitlines()) < 50


def test_own_page_runs_the_agent(browser: Any, served: str) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{served}/examples/pyodide_page/")
        page.wait_for_selector("html[data-state]", timeout=120_000)
        assert page.get_attribute("html", "data-state") == "done", page.text_content("#out")
        assert page.text_content("#out") == "Hello from py_agent, running in your page!"
        assert not errors
    finally:
        page.close()
