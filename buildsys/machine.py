"""Setting up the machine for `test` and `bench`: .venv, Chromium, Node.js, and for `test` ripgrep and fd
(tests/tools/test_tools_parity.py), the static servers (tests/browser/test_hosts.py), Firefox ESR,
WebKitGTK's WebDriver and Xvfb (tests/engines/)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .config import CHROMIUM_DEFAULT, MIN_NODE_MAJOR, PYODIDE_VERSION, ROOT, VENV, BuildError, log


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> Path:
    """Create .venv if missing; (re)install `.[test]` editable when pyproject.toml changed."""
    python = venv_python()
    if not python.exists():
        log(f"creating {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    stamp = VENV / ".py-agent-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        log("installing .[test] into .venv (editable)")
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]"], check=True)
        stamp.write_text(wanted + "\n")
    return python


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def apt_install(package: str, *more: str) -> bool:
    if not (is_root() and shutil.which("apt-get")):
        return False
    packages = [package, *more]
    log(f"installing Debian's {', '.join(packages)} package{'s' if more else ''} (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    # A server package would start its system service (on port 80) unless the machine's
    # policy-rc.d forbids it: the tests start their own, on free ports.
    policy = Path("/usr/sbin/policy-rc.d")
    added_policy = not policy.exists()
    if added_policy:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True, env=env)
    finally:
        if added_policy:
            policy.unlink()
    return True


def chromium_path() -> str:
    return os.environ.get("PY_AGENT_CHROMIUM", CHROMIUM_DEFAULT)


def ensure_chromium() -> None:
    if Path(chromium_path()).exists():
        return
    if os.environ.get("PY_AGENT_CHROMIUM") is None and apt_install("chromium") and Path(CHROMIUM_DEFAULT).exists():
        return
    raise BuildError(
        f"Chromium is missing ({chromium_path()} does not exist). Install Debian's package as root:\n"
        f"    apt-get update && apt-get install -y chromium\n"
        f"or point PY_AGENT_CHROMIUM at a Chromium or Chrome binary."
    )


# The commands pi's grep and find run; tests/tools/test_tools_parity.py runs pi's tools with them.
# Debian installs fd as `fdfind`.
SEARCH_TOOLS = (("rg", "ripgrep"), ("fdfind", "fd-find"))


def ensure_search_tools() -> None:
    missing = [package for command, package in SEARCH_TOOLS if shutil.which(command) is None]
    for package in missing:
        apt_install(package)
    still = [package for command, package in SEARCH_TOOLS if shutil.which(command) is None]
    if still:
        raise BuildError(
            "ripgrep and fd are missing (the workspace tools are compared with pi's, which run them). "
            f"Install Debian's packages as root:\n    apt-get update && apt-get install -y {' '.join(still)}"
        )


def node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.match(r"v(\d+)", out.strip())
    return int(match.group(1)) if match else None


def ensure_node() -> None:
    major = node_major()
    if major is None and apt_install("nodejs"):
        major = node_major()
    if major is None:
        raise BuildError(
            "Node.js is missing (needed to run the core tests inside Pyodide). Install it as root:\n"
            "    apt-get update && apt-get install -y nodejs"
        )
    if major < MIN_NODE_MAJOR:
        raise BuildError(
            f"Node.js {major} is too old for Pyodide {PYODIDE_VERSION}: install Node.js >= {MIN_NODE_MAJOR}"
        )


# The static servers that tests/browser/test_hosts.py serves the site with, in their stock MIME
# settings: Debian package -> its binary.
STATIC_SERVERS = {
    "nginx": "/usr/sbin/nginx",
    "apache2": "/usr/sbin/apache2",
    "lighttpd": "/usr/sbin/lighttpd",
    "caddy": "/usr/bin/caddy",
}


def ensure_static_servers() -> None:
    missing = [package for package, binary in STATIC_SERVERS.items() if not Path(binary).exists()]
    if not missing or (apt_install(*missing) and all(Path(STATIC_SERVERS[p]).exists() for p in missing)):
        return
    raise BuildError(
        f"Missing static servers for the hosting tests: {', '.join(missing)}. Install Debian's packages as root:\n"
        f"    apt-get update && apt-get install -y {' '.join(missing)}"
    )


# The other two engines of tests/engines/: Debian's package -> the program it provides.
ENGINE_PACKAGES = {"firefox-esr": "firefox-esr", "webkit2gtk-driver": "WebKitWebDriver", "xvfb": "Xvfb"}


def ensure_engines() -> None:
    """Firefox ESR, WebKitGTK's WebDriver (with its MiniBrowser) and Xvfb, for tests/engines/."""
    missing = [package for package, program in ENGINE_PACKAGES.items() if shutil.which(program) is None]
    if not missing or (apt_install(*missing) and all(shutil.which(ENGINE_PACKAGES[p]) for p in missing)):
        return
    raise BuildError(
        f"the browsers of tests/engines/ are missing ({', '.join(missing)}). Install Debian's packages as root:\n"
        f"    apt-get update && apt-get install -y {' '.join(ENGINE_PACKAGES)}"
    )
