"""Runs a script against one of the page's JavaScript modules in Node.js: the script gets the
module's URL as ``process.argv[1]`` and prints one line of JSON, which is returned."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest


def run_module_script(script: str, module: Path) -> Any:
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing (the build needs it too)")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, module.as_uri()],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return json.loads(out)
