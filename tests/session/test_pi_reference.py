"""pi's own code reads our exports: pi-agent-core 0.79.10's strict JSONL session reader and its
buildSessionContext (tests/reference/node_modules, run with Node.js) open the files this module
writes and see the same leaf, name, labels and context at every entry.

CPython only (the Pyodide runner does not run tests/session). The shared ``reference_install`` fixture installs
tests/reference/node_modules (``npm ci``) and fails, never skips, when Node.js is missing.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import tempfile
from typing import Any

import pytest
from session_helpers import assistant, build_sample, context_json, new_session, read_fixture, user

from py_agent.session import Session, export_jsonl, import_jsonl

HERE = pathlib.Path(__file__).resolve().parent
SCRIPT = HERE / "pi_reference_check.mjs"
HARNESS = HERE.parent / "reference" / "node_modules" / "@earendil-works" / "pi-agent-core" / "dist" / "harness"


@pytest.fixture(autouse=True)
def _reference(reference_install: pathlib.Path) -> None:
    assert HARNESS.is_dir(), f"{HARNESS} is missing after npm ci"


def pi_reads(text: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "session.jsonl"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            ["node", str(SCRIPT), str(path)], capture_output=True, text=True, encoding="utf-8", timeout=60, check=False
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def check(session: Session) -> None:
    text = export_jsonl(session)
    seen = pi_reads(text)
    ours = import_jsonl(text)
    assert seen["metadata"]["id"] == session.id
    assert seen["leafId"] == ours.leaf_id
    assert seen["name"] == ours.name
    assert seen["labels"] == ours.labels
    assert seen["entryIds"] == [entry.id for entry in session]
    for entry in session:
        assert seen["contexts"][entry.id] == context_json(session.build_context(entry.id)), entry.id


def test_pi_reads_our_sample_session() -> None:
    check(build_sample())


def test_pi_reads_an_upgraded_version_1_file() -> None:
    check(import_jsonl(read_fixture("v1_session.jsonl")))


def test_pi_reads_a_pi_file_we_round_tripped() -> None:
    check(import_jsonl(read_fixture("pi_full.jsonl")))


def test_pi_reads_odd_numbers_and_text() -> None:
    session = new_session()
    session.append_message(user("tiny \u2028 😀 \x00 \ud800 costs"))
    session.append_message(assistant("ok", cost=1.5e-7, tokens=(2**40, 0)))
    session.append_custom("numbers", {"big": 1e21, "small": 1e-7, "neg": -0.0, "half": 0.5, "int": 2**53})
    check(session)
