"""web/boot/pyodide-starts.js: the Pyodide instances started beside the app's (the snapshot worker,
the python tool's interpreters) start one at a time, and a start that fails or is stopped lets the
next one go (docs/web-architecture.md, "A renderer's memory"). Run in Node.js."""

from __future__ import annotations

from pathlib import Path

from node_module import run_module_script

MODULE = Path(__file__).resolve().parent.parent / "web" / "boot" / "pyodide-starts.js"

SCRIPT = """
const { startPyodideInTurn } = await import(process.argv[1]);
const log = [];
let running = 0;
let most = 0;
const start = (name, ms, fail = false) => () => {
  running += 1;
  most = Math.max(most, running);
  log.push(`start ${name}`);
  return new Promise((resolve, reject) => setTimeout(() => {
    running -= 1;
    log.push(`end ${name}`);
    fail ? reject(new Error(name)) : resolve(name);
  }, ms));
};
const results = await Promise.allSettled([
  startPyodideInTurn(start("snapshot", 60)),
  startPyodideInTurn(start("python", 10, true)),
  startPyodideInTurn(() => { throw new Error("stopped before it began"); }),
  startPyodideInTurn(start("python again", 10)),
]);
console.log(JSON.stringify({ log, most, results: results.map((r) => r.status) }));
"""


def test_starts_take_turns_and_a_failed_one_frees_the_next() -> None:
    result = run_module_script(SCRIPT, MODULE)
    assert result["most"] == 1
    assert result["log"] == [
        "start snapshot",
        "end snapshot",
        "start python",
        "end python",
        "start python again",
        "end python again",
    ]
    assert result["results"] == ["fulfilled", "rejected", "rejected", "fulfilled"]
