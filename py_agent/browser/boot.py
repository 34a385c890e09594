"""The Python that the page's start runs (``web/boot/``; the steps are in ``docs/boot.md``).

- :func:`import_app`: what a page imports before the app starts (the "import" step), and the
  versions the boot screen shows.
- :func:`warm`, then :func:`freeze`: run once before a memory snapshot is taken, by the page's
  snapshot worker and by the build (``scripts/snapshot.mjs`` under Node.js): both run this module,
  so both make the same snapshot.
- :func:`after_restore`: run once a page has restored a snapshot: what was set where the snapshot
  was made and must be this browser's.

Nothing runs at import time: this module is imported inside the snapshot, at build time, so its
module state must not hold the clock, the environment, random numbers or the page (see
``docs/boot.md``, "What a snapshot holds").
"""

from __future__ import annotations

import contextlib
import gc
import json
import sys
import time
from typing import Any

__all__ = ["after_restore", "freeze", "import_app", "warm"]


def import_app() -> str:
    """Imports py_agent, pydantic and the app's Python side (the standard library modules they
    need come from the site's zip, with their bytecode); returns the versions the boot screen
    shows, as JSON: ``{"python", "py_agent", "pydantic"}``. After a restore, all of it is imported
    already."""
    import pydantic

    from .. import __version__
    from . import main  # noqa: F401  (the entry web/app.js imports)

    return json.dumps({"python": sys.version.split()[0], "py_agent": __version__, "pydantic": pydantic.VERSION})


def warm() -> None:
    """What the app's start (``py_agent/app/controller.py``) does lazily, done once so that a restored
    page has it done, without its side effects: the plugins' modules imported (with the standard
    library modules they need), the model catalogue read, the demo model registered; then the
    validators that py_agent's models and TypeAdapters build on first use (``defer_build``, so that
    a start without a snapshot does not wait for them) built. What fails here is left for the page
    to do (or report), as without a snapshot."""
    with contextlib.suppress(Exception):
        from py_agent.app.plugins import default_plugins

        for build in default_plugins():
            with contextlib.suppress(Exception):
                build()  # imports the plugin's modules
    with contextlib.suppress(Exception):
        # The shipped subagent definitions, read and parsed once (~17 ms of the app's start).
        from py_agent.tools.subagent_definitions import builtin_definitions

        builtin_definitions()
    with contextlib.suppress(Exception):
        # The app's commands' parameters, read from their handlers' type hints at first use.
        from py_agent.app.controller import APP_COMMANDS

        for command in APP_COMMANDS:
            _ = command.params
    with contextlib.suppress(Exception):
        from py_agent.ai import models

        models._load()
    with contextlib.suppress(Exception):
        # The app's start registers the demo model again: idempotent, it then only sets its pace
        # (17-48 ms of a warm start's first registration, in the page's timings).
        from py_agent.app.demo import register_demo_model

        register_demo_model()
    for model in deferred_models():
        with contextlib.suppress(Exception):
            model.model_rebuild(force=True)
    for adapter in deferred_adapters():
        with contextlib.suppress(Exception):
            adapter.rebuild(force=True)


def deferred_models() -> list[type[Any]]:
    """py_agent's pydantic models whose validator is not built yet."""
    from pydantic import BaseModel
    from pydantic._internal._mock_val_ser import MockValSer

    found: list[type[Any]] = []
    stack: list[type[Any]] = [BaseModel]
    seen: set[type[Any]] = set()
    while stack:
        for model in stack.pop().__subclasses__():
            if model in seen:
                continue
            seen.add(model)
            stack.append(model)
            if model.__module__.startswith("py_agent") and isinstance(
                model.__dict__.get("__pydantic_validator__"), MockValSer
            ):
                found.append(model)
    return found


def deferred_adapters() -> list[Any]:
    """The TypeAdapters held by py_agent's modules whose validator is not built yet."""
    from pydantic import TypeAdapter
    from pydantic._internal._mock_val_ser import MockValSer

    return [
        value
        for name, module in list(sys.modules.items())
        if name.startswith("py_agent")
        for value in list(vars(module).values())
        if isinstance(value, TypeAdapter) and isinstance(value.validator, MockValSer)
    ]


def freeze() -> None:
    """Right before the snapshot is taken: what is alive now lives as long as the page, so it is moved
    out of the collector's way (else the first collection after a restore walks every object of
    every imported module)."""
    gc.collect()
    gc.freeze()


def after_restore(user_agent: str) -> None:
    """Right after a page restored a snapshot (``web/boot/snapshot.js`` ``afterRestore``), which was
    made elsewhere (a shipped one: at build time, under Node.js, in UTC): ``random`` gets a fresh
    seed (every restore starts from the same memory), the time module's zone is this browser's,
    the runtime ``sys`` names is this browser (``user_agent``); and pydantic-core, whose
    library the restore put back by hand, must answer. Raises when it does not (the page then
    starts Python without the snapshot)."""
    import random

    import pydantic_core

    random.seed()
    if pydantic_core.SchemaValidator({"type": "int"}).validate_python("3") != 3:
        raise RuntimeError("pydantic-core does not answer as it should after the restore")
    set_time_zone()
    set_runtime(user_agent)


def set_time_zone() -> None:
    """The time module's zone attributes from the local time of this year's January and July, as
    CPython's time module sets them without the C library's ``tzname`` (this runtime has no
    ``time.tzset``; the C library's own zone is set again by ``afterRestore``)."""
    year = (365 * 24 + 6) * 3600
    t = (time.time() // year) * year
    jan, jul = time.localtime(t), time.localtime(t + year / 2)
    zones = [(-jan.tm_gmtoff, jan.tm_zone), (-jul.tm_gmtoff, jul.tm_zone)]
    zones.sort(reverse=True)  # standard time first (west of the other), either hemisphere
    (time.timezone, std), (time.altzone, dst) = zones
    time.daylight = int(time.timezone != time.altzone)
    time.tzname = (std, dst)


def set_runtime(user_agent: str) -> None:
    """The runtime in the record of the interpreter's host that ``sys`` keeps (what runs it, where the
    snapshot was made: a browser's user agent, or Node.js at build time): this browser's. Nothing
    where there is no such record (CPython)."""
    try:
        info = sys._emscripten_info  # type: ignore[attr-defined]
    except AttributeError:
        return
    if not user_agent or info.runtime == user_agent:
        return
    fields = (info.emscripten_version, user_agent, info.pthreads, info.shared_memory)
    sys._emscripten_info = type(info)(fields)  # type: ignore[attr-defined]
