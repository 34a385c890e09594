"""web/boot/runtime.js: what the page's start changes in the JavaScript around Pyodide. Run in Node.js."""

from __future__ import annotations

from pathlib import Path

from node_module import run_module_script

MODULE = Path(__file__).resolve().parent.parent / "web" / "boot" / "runtime.js"

# A table as Emscripten's addFunction fills it: a JavaScript function carrying its signature
# (`sig`), set while acceptJsFunctionsInTable holds, and again once it is let go.
TABLE = """
const { acceptJsFunctionsInTable } = await import(process.argv[1]);
const table = new WebAssembly.Table({ element: "anyfunc", initial: 4 });
const add = (a, b) => a + b;
add.sig = "iii";
const big = (a) => a * 2n;
big.sig = "jj";
let seen = null;
const note = (x) => { seen = x; };
note.sig = "vd";
const plain = () => 1;
const threw = (f) => { try { f(); return null; } catch (error) { return error.constructor.name; } };
const restore = acceptJsFunctionsInTable();
const during = [threw(() => table.set(0, add)), threw(() => table.set(1, big)), threw(() => table.set(2, note)),
  threw(() => table.set(3, plain))];
const called = [table.get(0)(2, 3), String(table.get(1)(21n)), (table.get(2)(1.5), seen), table.get(0) === add];
restore();
const after = threw(() => table.set(3, add));
console.log(JSON.stringify({ during, called, after }));
"""


def test_js_functions_go_into_the_table_wrapped_without_a_throw() -> None:
    result = run_module_script(TABLE, MODULE)
    # Functions with a signature go in, wrapped; one without stays refused, as WebAssembly refuses it.
    assert result["during"] == [None, None, None, "TypeError"]
    assert result["called"] == [5, "42", 1.5, False]
    # Let go, set() is the browser's again.
    assert result["after"] == "TypeError"
