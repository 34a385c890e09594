"""Puts this folder on ``sys.path`` so the vector files import ``provider_helpers`` as a plain
module (the same files run in Pyodide, where there is no pytest)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
