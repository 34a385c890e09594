"""The Python code blocks of README.md, for tests/test_readme.py and tests/test_dist.py."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks(path: Path = README) -> list[str]:
    """Every fenced ```python block, in order (other fences are shell commands or output)."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)


def needs_provider(block: str) -> bool:
    """A block that talks to a real provider: it reads the provider's key from the environment."""
    return "_API_KEY" in block


def needs_mcp_server(block: str) -> bool:
    """A block that connects to an MCP server: it reads the server's URL from ``MCP_URL``."""
    return "MCP_URL" in block
