"""A small pytest-like test runner for Pyodide, driven by run.mjs.

pytest itself cannot drive async tests inside Pyodide without JSPI (``asyncio.run`` and
``run_until_complete`` need stack switching), so this runner collects and runs the tests itself
and awaits coroutines on Pyodide's own event loop (run.mjs awaits ``Session.run_file``).

What it supports, as pytest does:
- ``def test_*()`` and ``async def test_*()`` functions, and ``Test*`` classes (no ``__init__``)
  with ``test_*`` methods, ``setup_method``/``teardown_method``, ``setup_module``/``teardown_module``;
- ``@pytest.mark.parametrize`` (stacked, ``pytest.param(..., id=..., marks=...)``, ``ids=``),
  ``@pytest.mark.skip``/``skipif``/``xfail``, module-level ``pytestmark``;
- ``pytest.raises``, ``pytest.skip()``, ``pytest.xfail()``, ``pytest.fail()``, ``pytest.approx``;
- pytest's assertion rewriting for the test modules (helper modules are imported normally);
- modules imported as pytest's default "prepend" import mode does: the first folder upwards
  without ``__init__.py`` goes on ``sys.path``.

Not supported: fixtures (a test whose parameters are not all parametrized fails with a clear
message), conftest.py, plugins.

It prints one line per file (``-v``: one per test), the failures with tracebacks, and a closing
line ``N passed, M failed`` (``, K skipped`` when some were skipped).
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import itertools
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pytest
from _pytest.mark.structures import Mark, ParameterSet
from _pytest.outcomes import Failed, Skipped, XFailed

RUNNER_FILE = os.path.abspath(__file__)


@dataclass
class TestCase:
    nodeid: str
    func: Callable[..., Any]
    kwargs: dict[str, Any]
    marks: list[Mark]
    cls: type | None = None
    error: str | None = None  # a collection problem reported as this test's failure


@dataclass
class Outcome:
    nodeid: str
    status: str  # passed, failed, skipped, xfailed, xpassed
    seconds: float
    report: str = ""


@dataclass
class Session:
    rootdir: str
    keyword: str = ""
    timeout: float = 120.0
    verbose: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        install_assertion_explanations()

    # ---- running ----

    async def run_file(self, path: str) -> None:
        rel = os.path.relpath(path, self.rootdir)
        try:
            module = import_test_module(path)
        except BaseException as exc:  # collection error: reported, and the session goes on
            self.outcomes.append(Outcome(rel, "failed", 0.0, f"ERROR collecting {rel}\n{format_exc(exc)}"))
            self.print_file_line(rel, "E")
            return
        cases = [c for c in collect(module, rel) if self.keyword.lower() in c.nodeid.lower()]
        if not cases:
            self.print_file_line(rel, "")
            return
        letters = []
        await call_hook(module, "setup_module", module)
        try:
            for case in cases:
                outcome = await self.run_case(case)
                self.outcomes.append(outcome)
                letters.append(LETTERS[outcome.status])
                if self.verbose:
                    print(f"{outcome.nodeid} {outcome.status.upper()} ({outcome.seconds:.2f}s)", flush=True)
        finally:
            await call_hook(module, "teardown_module", module)
        if not self.verbose:
            self.print_file_line(rel, "".join(letters))

    async def run_case(self, case: TestCase) -> Outcome:
        start = time.monotonic()

        def done(status: str, report: str = "") -> Outcome:
            return Outcome(case.nodeid, status, time.monotonic() - start, report)

        if case.error is not None:
            return done("failed", case.error)
        skip_reason = skip_marks(case)
        if skip_reason is not None:
            return done("skipped", skip_reason)
        xfail = xfail_mark(case)
        try:
            await self.call(case)
        except Skipped as exc:
            return done("skipped", str(exc.msg))
        except XFailed:
            return done("xfailed")
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if xfail is not None and (xfail.get("raises") is None or isinstance(exc, xfail["raises"])):
                return done("xfailed")
            return done("failed", format_exc(exc))
        if xfail is not None and xfail.get("strict"):
            return done("failed", f"[XPASS(strict)] {xfail.get('reason', '')}")
        return done("xpassed" if xfail is not None else "passed")

    async def call(self, case: TestCase) -> None:
        instance = case.cls() if case.cls is not None else None
        func = case.func.__get__(instance) if instance is not None else case.func
        if instance is not None:
            await call_hook(instance, "setup_method", func)
        try:
            result = func(**case.kwargs)
            if inspect.isawaitable(result):
                deadline = asyncio.timeout(self.timeout)
                try:
                    async with deadline:
                        await result
                except TimeoutError:
                    if deadline.expired():
                        pytest.fail(f"timed out after {self.timeout:g}s (run.mjs --timeout)")
                    raise
        finally:
            if instance is not None:
                await call_hook(instance, "teardown_method", func)

    def add_failure(self, nodeid: str, report: str) -> None:
        """Lets run.mjs report a problem seen outside Python (e.g. blocked file access)."""
        self.outcomes.append(Outcome(nodeid, "failed", 0.0, report))

    # ---- reporting ----

    def print_file_line(self, rel: str, letters: str) -> None:
        if not self.verbose:
            print(f"{rel} {letters}".rstrip(), flush=True)

    def finish(self) -> int:
        """Print failures and the summary line; return the process exit code."""
        failures = [o for o in self.outcomes if o.status == "failed"]
        if failures:
            print("\n" + " FAILURES ".center(78, "="))
            for o in failures:
                print(f" {o.nodeid} ".center(78, "_"))
                print(o.report.rstrip() + "\n")
            print(" short test summary info ".center(78, "="))
            for o in failures:
                first = next(
                    (ln for ln in reversed(o.report.strip().splitlines()) if ln.strip() and ln[0] not in " +"),
                    "",
                )
                print(f"FAILED {o.nodeid} - {first.strip()[:160]}")
        counts = {s: sum(1 for o in self.outcomes if o.status == s) for s in LETTERS}
        extra = [f"{counts[s]} {s}" for s in ("xfailed", "xpassed") if counts[s]]
        elapsed = time.monotonic() - self.started
        print(
            f"\nPyodide {sys.version.split()[0]}: ran in {elapsed:.2f}s" + (f" ({', '.join(extra)})" if extra else "")
        )
        summary = f"{counts['passed'] + counts['xpassed']} passed, {counts['failed']} failed"
        if counts["skipped"]:
            summary += f", {counts['skipped']} skipped"
        print(summary, flush=True)
        if not self.outcomes:
            print("no tests ran", flush=True)
            return 5
        return 1 if counts["failed"] else 0


LETTERS = {"passed": ".", "failed": "F", "skipped": "s", "xfailed": "x", "xpassed": "X"}


# ---- assertion explanations ----

MAX_EXPLANATION_LINES = 40


def explain_comparison(op: str, left: object, right: object) -> str | None:
    """pytest's detailed comparison (list/dict/str diffs) for a failed rewritten assert.

    pytest installs this per test through its config; without one, the runner calls
    ``assertrepr_compare`` itself with the options its signature takes (it varies by version).
    """
    from _pytest.assertion import util

    options: dict[str, Any] = {
        "verbose": 1,
        "highlighter": lambda source, lexer="python": source,
        "assertion_text_diff_style": "ndiff",
        "use_ascii": False,
    }
    try:
        accepted = inspect.signature(util.assertrepr_compare).parameters
        kwargs = {k: v for k, v in options.items() if k in accepted}
        if "config" in accepted:
            return None  # an older pytest: its explanation needs a real config
        lines = list(
            itertools.islice(iter(util.assertrepr_compare(op, left, right, **kwargs) or ()), MAX_EXPLANATION_LINES)
        )
    except Exception:
        return None
    if not lines:
        return None
    return "\n~".join(line.replace("\n", "\\n") for line in lines).replace("%", "%%")


def install_assertion_explanations() -> None:
    try:
        from _pytest.assertion import util
    except ImportError:
        return
    util._reprcompare = explain_comparison


# ---- importing, as pytest's "prepend" import mode ----


def module_name_and_basedir(path: str) -> tuple[str, str]:
    path = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    folder = os.path.dirname(path)
    while os.path.exists(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return ".".join(parts), folder


def import_test_module(path: str) -> ModuleType:
    name, basedir = module_name_and_basedir(path)
    if basedir not in sys.path:
        sys.path.insert(0, basedir)
    if "." in name:
        importlib.import_module(name.rsplit(".", 1)[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        source = open(path, "rb").read()  # noqa: SIM115 - short read
        tree = ast.parse(source, filename=path)
        try:
            from _pytest.assertion.rewrite import rewrite_asserts

            rewrite_asserts(tree, source, path, None)
        except Exception:  # plain asserts still work, with less detail
            tree = ast.parse(source, filename=path)
        exec(compile(tree, path, "exec", dont_inherit=True), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


# ---- collecting ----


def marks_of(obj: Any) -> list[Mark]:
    marks = getattr(obj, "pytestmark", [])
    if not isinstance(marks, list):
        marks = [marks]
    return [getattr(m, "mark", m) for m in marks]


def collect(module: ModuleType, rel: str) -> Iterator[TestCase]:
    module_marks = marks_of(module)
    for name, obj in list(vars(module).items()):
        if name.startswith("test") and inspect.isfunction(obj) and obj.__module__ == module.__name__:
            yield from expand(f"{rel}::{name}", obj, module_marks + marks_of(obj), None)
        elif name.startswith("Test") and inspect.isclass(obj) and obj.__module__ == module.__name__:
            if "__init__" in vars(obj):
                continue  # pytest skips such classes too
            class_marks = module_marks + marks_of(obj)
            for attr, member in inspect.getmembers(obj, inspect.isfunction):
                if attr.startswith("test"):
                    yield from expand(f"{rel}::{name}::{attr}", member, class_marks + marks_of(member), obj)


def expand(nodeid: str, func: Callable[..., Any], marks: list[Mark], cls: type | None) -> Iterator[TestCase]:
    param_marks = [m for m in marks if m.name == "parametrize"]
    other_marks = [m for m in marks if m.name != "parametrize"]
    try:
        axes = [parametrize_axis(m) for m in param_marks]
    except Exception as exc:
        yield TestCase(nodeid, func, {}, other_marks, cls, error=f"bad parametrize: {exc!r}")
        return
    seen: dict[str, int] = {}
    for combo in itertools.product(*axes) if axes else [()]:
        kwargs: dict[str, Any] = {}
        ids: list[str] = []
        case_marks = list(other_marks)
        for values, param_id, extra_marks in combo:
            kwargs.update(values)
            ids.append(param_id)
            case_marks += extra_marks
        test_id = "-".join(ids)
        if test_id in seen:
            seen[test_id] += 1
            test_id = f"{test_id}{seen[test_id]}"
        else:
            seen[test_id] = 0
        full_id = f"{nodeid}[{test_id}]" if axes else nodeid
        missing = missing_arguments(func, kwargs, cls is not None)
        error = (
            f"{full_id} needs {', '.join(missing)}: fixtures are not supported by the Pyodide runner "
            f"(tests/pyodide/runner.py); use plain helpers or parametrize"
            if missing
            else None
        )
        yield TestCase(full_id, func, kwargs, case_marks, cls, error=error)


def parametrize_axis(mark: Mark) -> list[tuple[dict[str, Any], str, list[Mark]]]:
    argnames = mark.args[0] if mark.args else mark.kwargs["argnames"]
    argvalues = mark.args[1] if len(mark.args) > 1 else mark.kwargs["argvalues"]
    if mark.kwargs.get("indirect"):
        raise ValueError("indirect parametrization needs fixtures")
    names = [n.strip() for n in argnames.split(",") if n.strip()] if isinstance(argnames, str) else list(argnames)
    ids_arg = mark.kwargs.get("ids")
    axis = []
    for index, raw in enumerate(argvalues):
        if isinstance(raw, ParameterSet):
            values, param_marks, explicit_id = list(raw.values), [getattr(m, "mark", m) for m in raw.marks], raw.id
        else:
            values = [raw] if len(names) == 1 else list(raw)
            param_marks, explicit_id = [], None
        if len(values) != len(names):
            raise ValueError(f"{names} got {len(values)} values: {values!r}")
        if explicit_id is None and ids_arg is not None:
            explicit_id = ids_arg(raw) if callable(ids_arg) else ids_arg[index]
        param_id = (
            str(explicit_id)
            if explicit_id is not None
            else "-".join(id_for(v, n, index) for v, n in zip(values, names, strict=True))
        )
        axis.append((dict(zip(names, values, strict=True)), param_id, param_marks))
    return axis


def id_for(value: Any, argname: str, index: int) -> str:
    """pytest's default id for one parameter value."""
    if isinstance(value, str) and value:
        return value.encode("unicode_escape").decode("ascii")
    if value is None or isinstance(value, (bool, int, float, complex)):
        return str(value)
    if isinstance(value, type) or inspect.isfunction(value):
        return getattr(value, "__name__", f"{argname}{index}")
    return f"{argname}{index}"


def missing_arguments(func: Callable[..., Any], kwargs: dict[str, Any], is_method: bool) -> list[str]:
    params = list(inspect.signature(func).parameters.values())
    if is_method and params:
        params = params[1:]
    return [
        p.name
        for p in params
        if p.name not in kwargs
        and p.default is inspect.Parameter.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


# ---- marks ----


def eval_condition(condition: Any, func: Callable[..., Any]) -> bool:
    if isinstance(condition, str):
        namespace = {"os": os, "sys": sys, "platform": __import__("platform"), **func.__globals__}
        return bool(eval(condition, namespace))
    return bool(condition)


def skip_marks(case: TestCase) -> str | None:
    for mark in case.marks:
        if mark.name == "skip":
            return str(mark.kwargs.get("reason", mark.args[0] if mark.args else "skipped"))
        if mark.name == "skipif":
            conditions = mark.args or (mark.kwargs.get("condition"),)
            if any(eval_condition(c, case.func) for c in conditions):
                return str(mark.kwargs.get("reason", "skipif"))
    return None


def xfail_mark(case: TestCase) -> dict[str, Any] | None:
    for mark in case.marks:
        if mark.name != "xfail":
            continue
        conditions = mark.args or ((mark.kwargs["condition"],) if "condition" in mark.kwargs else ())
        if not conditions or any(eval_condition(c, case.func) for c in conditions):
            return dict(mark.kwargs)
    return None


# ---- helpers ----


async def call_hook(owner: Any, name: str, *args: Any) -> None:
    hook = getattr(owner, name, None)
    if hook is None:
        return
    result = hook(*args) if _accepts_args(hook) else hook()
    if inspect.isawaitable(result):
        await result


def _accepts_args(hook: Callable[..., Any]) -> bool:
    try:
        return bool(inspect.signature(hook).parameters)
    except (TypeError, ValueError):
        return False


def format_exc(exc: BaseException) -> str:
    """The traceback without the runner's own frames."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == RUNNER_FILE:
        tb = tb.tb_next
    if isinstance(exc, Failed):
        return f"Failed: {exc.msg}"
    return "".join(traceback.format_exception(type(exc), exc, tb))
