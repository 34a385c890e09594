"""The site's py_agent wheel, built from this checkout with the standard library, and reading wheels."""

from __future__ import annotations

import ast
import base64
import fnmatch
import hashlib
import re
import tomllib
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import PACKAGE_DIR, ROOT, SITE_WHEEL_EXCLUDES, ZIP_EPOCH, BuildError


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class WheelInfo:
    name: str  # canonical
    version: str
    requires: tuple[str, ...]  # canonical names of unconditional (non-extra) requirements
    imports: tuple[str, ...]


def read_wheel_info(path: Path) -> WheelInfo:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        dist_info = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), None)
        if dist_info is None:
            raise BuildError(f"{path.name} has no .dist-info/METADATA: not a wheel?")
        metadata = zf.read(f"{dist_info}/METADATA").decode("utf-8")
        top_level = f"{dist_info}/top_level.txt"
        imports = zf.read(top_level).decode("utf-8").split() if top_level in names else import_names(names)
    headers = parse_metadata_headers(metadata)
    requires = []
    for req in headers.get("requires-dist", []):
        req_name, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req_name)
        if match:
            requires.append(canonical_name(match.group(1)))
    return WheelInfo(
        name=canonical_name(headers["name"][0]),
        version=headers["version"][0],
        requires=tuple(requires),
        imports=tuple(sorted(set(imports))),
    )


def parse_metadata_headers(metadata: str) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for line in metadata.splitlines():
        if not line:
            break  # the body (long description) starts here (a line of spaces continues a header)
        if line[0] in " \t" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        headers.setdefault(key.strip().lower(), []).append(value.strip())
    return headers


def import_names(names: Iterable[str]) -> list[str]:
    """Top-level importable names of a wheel without top_level.txt."""
    result = set()
    for name in names:
        first = name.split("/")[0]
        if first.endswith((".dist-info", ".data")):
            continue
        if "/" in name:
            result.add(first)
        elif first.endswith(".py"):
            result.add(first[: -len(".py")])
        elif first.endswith(".so"):
            result.add(first.split(".")[0])
    return sorted(result)


# --------------------------------------------------------------------------------------
# The py_agent wheel, built from this checkout with the standard library
# --------------------------------------------------------------------------------------


def read_pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def py_agent_version() -> str:
    init = PACKAGE_DIR / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        named = any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
        if named and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    raise BuildError(f'{init} has no literal `__version__ = "..."`')


def glob_match(rel: str, pattern: str) -> bool:
    """A [tool.setuptools.package-data] glob against a path relative to the package ("**/" may match none)."""
    return fnmatch.fnmatch(rel, pattern) or (pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:]))


def package_files(for_site: bool = True) -> list[Path]:
    """What setuptools puts in the wheel: the modules of py_agent and its subpackages (folders
    with __init__.py), plus the files that [tool.setuptools.package-data] names; for the site's
    wheel (``for_site``), without SITE_WHEEL_EXCLUDES (CPython-only code)."""
    package_data = read_pyproject().get("tool", {}).get("setuptools", {}).get("package-data", {})
    patterns = list(package_data.get("py_agent", []))
    files = []
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(PACKAGE_DIR).as_posix()
        is_module = path.suffix == ".py" and (path.parent / "__init__.py").exists()
        excluded = for_site and any(fnmatch.fnmatch(rel, p) for p in SITE_WHEEL_EXCLUDES)
        if (is_module or any(glob_match(rel, p) for p in patterns)) and not excluded:
            files.append(path)
    return files


def wheel_metadata(version: str) -> str:
    project = read_pyproject()["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    license_field = project.get("license")
    if isinstance(license_field, str):  # an SPDX expression (PEP 639)
        lines.append(f"License-Expression: {license_field}")
    elif isinstance(license_field, dict) and license_field.get("text"):
        lines.append(f"License: {license_field['text']}")
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {dep}; extra == "{extra}"' for dep in deps]
    return "\n".join(lines) + "\n"


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_py_agent_wheel(out_dir: Path) -> Path:
    """A reproducible pure wheel (same sources, same bytes), so its sha256 is stable."""
    version = py_agent_version()
    dist_info = f"py_agent-{version}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (f"py_agent/{p.relative_to(PACKAGE_DIR).as_posix()}", p.read_bytes()) for p in package_files()
    ]
    entries += [
        (f"{dist_info}/METADATA", wheel_metadata(version).encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: py-agent build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{dist_info}/top_level.txt", b"py_agent\n"),
    ]
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    path = out_dir / f"py_agent-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def check_dependencies_shipped(wheel: WheelInfo, shipped: set[str]) -> None:
    missing = [dep for dep in wheel.requires if dep not in shipped]
    if missing:
        raise BuildError(
            f"py_agent requires {', '.join(missing)}, which the site does not ship. Add it to "
            f"SITE_REQUIREMENTS in buildsys/config.py and run `python3 build.py lock`."
        )
