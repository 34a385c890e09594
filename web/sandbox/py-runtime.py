"""py-agent's helpers inside the python tool's sandboxed interpreter (never the agent's own).

py-worker.js runs this once after Pyodide starts, keeps the three functions and deletes their
names from ``__main__``. Each run gets a fresh namespace; modules stay imported between runs.

- ``_pyagent_sync(reset, files, deletes)``: workspace files into ``/workspace`` before a run;
- ``_pyagent_run(code)``: runs the code with ``/workspace`` as working folder; returns
  ``{"ok", "value"}`` (``repr`` of the last expression, as in a REPL) or ``{"ok", "error"}``
  with the traceback of the user's code only;
- ``_pyagent_collect()``: the files the run created or changed, and the ones it deleted.
"""

import builtins
import contextlib
import hashlib
import linecache
import os
import shutil
import sys
import traceback

from pyodide.code import eval_code_async

_ROOT = "/workspace"
_FILENAME = "<python>"
_MAX_REPR = 100_000
_known = {}


def _digest(data):
    return hashlib.sha1(data).hexdigest()


def _full(path):
    full = os.path.normpath(os.path.join(_ROOT, path))
    if not full.startswith(_ROOT + "/"):
        raise ValueError(f"invalid workspace path: {path!r}")
    return full


def _pyagent_sync(reset, files, deletes):
    if reset:
        shutil.rmtree(_ROOT, ignore_errors=True)
        _known.clear()
    os.makedirs(_ROOT, exist_ok=True)
    for path in deletes:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.remove(_full(path))
        _known.pop(path, None)
    for item in files:
        path, data = item.path, item.data
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data.to_bytes()
        full = _full(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.isdir(full):
            shutil.rmtree(full)
        with open(full, "wb") as handle:
            handle.write(raw)
        _known[path] = _digest(raw)


def _format_error(error):
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != _FILENAME:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _show(value):
    try:
        text = repr(value)
    except BaseException as error:
        text = f"<repr failed: {type(error).__name__}: {error}>"
    if len(text) > _MAX_REPR:
        text = text[:_MAX_REPR] + f"\n[value cut at {_MAX_REPR} characters]"
    return text


async def _pyagent_run(code):
    os.makedirs(_ROOT, exist_ok=True)
    os.chdir(_ROOT)
    linecache.cache[_FILENAME] = (len(code), None, code.splitlines(True), _FILENAME)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        value = await eval_code_async(code, namespace, filename=_FILENAME)
    except SystemExit as error:
        if error.code in (None, 0):
            return {"ok": True, "value": None}
        return {"ok": False, "error": {"type": "SystemExit", "message": str(error.code), "traceback": ""}}
    except BaseException as error:
        return {
            "ok": False,
            "error": {"type": type(error).__name__, "message": str(error), "traceback": _format_error(error)},
        }
    finally:
        for stream in ("stdout", "stderr"):
            with contextlib.suppress(Exception):
                getattr(sys, stream).flush()
    return {"ok": True, "value": None if value is None else _show(value)}


def _pyagent_collect():
    found = {}
    changed = []
    if os.path.isdir(_ROOT):
        for folder, subfolders, names in os.walk(_ROOT):
            subfolders[:] = [name for name in subfolders if name != "__pycache__"]
            for name in names:
                full = os.path.join(folder, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                relative = os.path.relpath(full, _ROOT)
                with open(full, "rb") as handle:
                    raw = handle.read()
                digest = _digest(raw)
                found[relative] = digest
                if _known.get(relative) != digest:
                    changed.append({"path": relative, "data": raw})
    deleted = [path for path in _known if path not in found]
    _known.clear()
    _known.update(found)
    return {"files": changed, "deletes": deleted}
