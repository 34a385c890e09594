"""Makes ``import session_helpers`` work under pytest (the Pyodide runner puts this folder on
``sys.path`` itself). No fixtures live here: these tests also run without pytest's fixture machinery."""

import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
