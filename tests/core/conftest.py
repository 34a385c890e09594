"""Makes ``from helpers import ...`` work under pytest (the Pyodide runner puts this directory on
``sys.path`` itself). No fixtures live here: the tests must also run without pytest's fixture machinery."""

import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
