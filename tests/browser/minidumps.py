"""What the minidumps Chromium wrote say about a renderer's crash that its log does not.

Debian's Chromium runs crashpad: a renderer that dies of a signal (not a V8 out-of-memory, which
the log names) leaves `<uuid>.dmp` in its crash database and nothing in stderr. Its exception
stream gives the signal, the faulting address and the instruction's place in the binary; its
crashpad annotations give the renderer's switches (e.g. `--subproc-heap-profiling`: how the heap
profiler's crash was found, docs/web-architecture.md, "A crash that is Chromium's"). Only the few
streams read here are parsed (Microsoft's MINIDUMP_* structures, as crashpad writes them).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

CRASH_DATABASE = Path.home() / ".config" / "chromium" / "Crash Reports"
SIGNALS = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV"}
EXCEPTION_STREAM, MODULE_LIST_STREAM = 6, 4
CONTEXT_RIP_OFFSET = 0xF8  # MINIDUMP_CONTEXT_AMD64
# Switches worth naming in a report: the ones that change what a renderer does.
TELLING_SWITCH = re.compile(rb"--(?:subproc-heap-profiling|js-flags=[^\x00]*|type=[a-z-]+)")


@dataclass(frozen=True)
class Minidump:
    path: Path
    signal: str
    fault_address: int
    instruction: str  # "<module>+0x<offset>", or the bare address (generated code)
    switches: tuple[str, ...]

    def describe(self) -> str:
        switches = " ".join(self.switches) or "none of note"
        return (
            f"{self.signal} at {self.fault_address:#x}, instruction {self.instruction}; "
            f"switches: {switches} ({self.path.name})"
        )


def read_minidump(path: Path) -> Minidump:
    data = path.read_bytes()
    _signature, _version, count, directory = struct.unpack_from("<IIII", data, 0)
    streams: dict[int, int] = {}
    for index in range(count):
        kind, _size, offset = struct.unpack_from("<III", data, directory + 12 * index)
        streams.setdefault(kind, offset)
    exception = streams[EXCEPTION_STREAM]
    code, _flags, _record, address = struct.unpack_from("<IIQQ", data, exception + 8)
    _context_size, context = struct.unpack_from("<II", data, exception + 8 + 152)
    (rip,) = struct.unpack_from("<Q", data, context + CONTEXT_RIP_OFFSET)
    return Minidump(
        path=path,
        signal=SIGNALS.get(code, f"signal {code}"),
        fault_address=address,
        instruction=_place(data, streams.get(MODULE_LIST_STREAM), rip),
        switches=tuple(dict.fromkeys(m.group(0).decode(errors="replace") for m in TELLING_SWITCH.finditer(data))),
    )


def _place(data: bytes, modules: int | None, address: int) -> str:
    if modules is not None:
        (count,) = struct.unpack_from("<I", data, modules)
        for index in range(count):
            base, size, _checksum, _stamp, name = struct.unpack_from("<QIIII", data, modules + 4 + 108 * index)
            if base <= address < base + size:
                (length,) = struct.unpack_from("<I", data, name)
                module = data[name + 4 : name + 4 + length].decode("utf-16-le", errors="replace")
                return f"{Path(module).name}+{address - base:#x}"
    return f"{address:#x}"


def minidumps_since(timestamp: float, database: Path = CRASH_DATABASE) -> list[Minidump]:
    """The dumps written at or after `timestamp` (a time.time()), oldest first; unreadable ones left out."""
    dumps = []
    for path in database.glob("*/*.dmp"):
        try:
            written = path.stat().st_mtime
        except OSError:  # moved from new/ to pending/ meanwhile
            continue
        if written >= timestamp:
            dumps.append((written, path))
    found = []
    for _written, path in sorted(dumps):
        try:
            found.append(read_minidump(path))
        except (struct.error, KeyError, OSError):
            continue
    return found
