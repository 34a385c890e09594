"""Agent definitions for the ``subagent`` tool: Markdown with frontmatter, and their registry.

A definition is what pi's subagent example keeps in ``~/.pi/agent/agents/*.md``::

    ---
    name: scout
    description: Fast workspace recon
    tools: read, grep, ls        # optional: a comma list (or a YAML list); absent = every session tool
    model: anthropic/claude-haiku-4-5   # optional: "provider/id" or a bare id; absent = the session's model
    ---
    You are a scout. ...         # the body: appended to the child's system prompt

The built-ins (``scout``, ``planner``, ``reviewer``, ``worker``) ship as package data
(``py_agent/tools/agents/*.md``, read with :mod:`importlib.resources`). User definitions live in an
:class:`AgentRegistry`; the web layer persists them (``to_records()`` / ``load_records()``, or
:func:`load_user_definitions` / :func:`save_user_definitions` over a key/value backend). A
definition imported from a file is ``"pending"`` until the user confirms it (pi asks before running
repo-controlled project agents; here, before running imported ones).

Pure: stdlib and pydantic only (no filesystem, process or browser modules).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeAlias

from ..ai.types import PiModel

__all__ = [
    "AgentDefinition",
    "AgentRegistry",
    "AgentSource",
    "DefinitionError",
    "DefinitionStatus",
    "FrontmatterError",
    "KeyValueBackend",
    "builtin_definitions",
    "definition_to_markdown",
    "format_agent_list",
    "load_user_definitions",
    "parse_agent_definition",
    "parse_frontmatter",
    "save_user_definitions",
]

AgentSource: TypeAlias = Literal["builtin", "user"]
"""Where a definition comes from (pi: ``"user"`` / ``"project"``)."""

DefinitionStatus: TypeAlias = Literal["active", "pending"]
"""``"pending"``: imported from a file and not confirmed yet; it does not run until confirmed."""


class FrontmatterError(ValueError):
    """The frontmatter is not in the YAML subset this parser reads."""


class DefinitionError(ValueError):
    """A Markdown text is not a usable agent definition (no ``name`` or ``description``, ...)."""


# ---------------------------------------------------------------------------------------------
# Frontmatter (pi's parseFrontmatter: "---" line, YAML, "\n---", body trimmed)


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """Split ``content`` into its frontmatter mapping and its body (as pi's ``parseFrontmatter``).

    Newlines are normalized and a BOM dropped; without a complete ``---`` block the whole text is
    the body (not trimmed) and the mapping is empty; otherwise the body is trimmed. The YAML is a
    subset: ``key: value`` pairs with plain, quoted, flow-list (``[a, b]``), block-list (``- a``)
    and block-scalar (``|``, ``>``) values, nested mappings by indentation, and ``#`` comments.
    Scalars stay strings (``null``/``~``/empty is ``None``). Raises :class:`FrontmatterError`.
    """
    normalized = content.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return {}, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return {}, normalized
    yaml_text = normalized[4:end]
    body = normalized[end + 4 :].strip()
    if not yaml_text.strip():
        return {}, body
    return _parse_mapping(yaml_text.split("\n")), body


_KEY = re.compile(r"^(?P<key>[^\s#'\"][^:]*?|\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*')\s*:(?:\s+|$)(?P<rest>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _parse_mapping(lines: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    index = 0
    base: int | None = None
    while index < len(lines):
        line = lines[index]
        if _is_blank(line):
            index += 1
            continue
        if "\t" in line[: _indent(line) + 1]:
            raise FrontmatterError(f"tabs are not allowed for indentation: {line!r}")
        indent = _indent(line)
        if base is None:
            base = indent
        if indent != base:
            raise FrontmatterError(f"unexpected indentation: {line!r}")
        match = _KEY.match(line[indent:])
        if match is None:
            raise FrontmatterError(f"expected `key: value`: {line!r}")
        key = _scalar(match.group("key"))
        if not isinstance(key, str):
            raise FrontmatterError(f"invalid key: {line!r}")
        rest = _strip_comment(match.group("rest")).strip()
        # The block belonging to this key: the following lines indented deeper (and blank/comment lines).
        block_end = index + 1
        while block_end < len(lines):
            following = lines[block_end]
            if not _is_blank(following) and _indent(following) <= indent:
                break
            block_end += 1
        block = lines[index + 1 : block_end]
        if rest[:1] in ("|", ">"):
            result[key] = _block_scalar(rest, block)
        elif rest:
            continuation = [part.strip() for part in block if part.strip() and not part.strip().startswith("#")]
            if continuation and rest[:1] not in ("[", "'", '"'):
                rest = " ".join([rest, *continuation])
            elif continuation:
                raise FrontmatterError(f"unexpected lines after {key!r}")
            result[key] = _value(rest)
        else:
            content_lines = [part for part in block if not _is_blank(part)]
            if not content_lines:
                result[key] = None
            elif content_lines[0].strip().startswith("- ") or content_lines[0].strip() == "-":
                result[key] = _block_list(content_lines)
            else:
                result[key] = _parse_mapping(block)
        index = block_end
    return result


def _strip_comment(text: str) -> str:
    """Drop a trailing `` # comment`` outside quotes."""
    quote: str | None = None
    for position, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in ("'", '"') and (position == 0 or text[position - 1] in " [,"):
            quote = char
        elif char == "#" and (position == 0 or text[position - 1] in " \t"):
            return text[:position].rstrip()
    return text


def _block_scalar(header: str, block: list[str]) -> str:
    style = header[0]
    chomp = "+" if "+" in header else "-" if "-" in header else ""
    indents = [_indent(line) for line in block if line.strip()]
    if not indents:
        return ""
    width = min(indents)
    lines = [line[width:] if line.strip() else "" for line in block]
    trailing = 0
    while lines and not lines[-1]:
        lines.pop()
        trailing += 1
    if style == "|":
        text = "\n".join(lines)
    else:
        text = ""
        for line in lines:
            if not line:
                text += "\n"
            elif not text or text.endswith("\n") or line.startswith(" "):
                text += line
            else:
                text += " " + line
    if chomp == "-":
        return text
    if chomp == "+":
        return text + "\n" * (trailing + 1)
    return text + "\n"


def _block_list(lines: list[str]) -> list[Any]:
    items: list[Any] = []
    indent = _indent(lines[0])
    for line in lines:
        stripped = line.strip()
        if _indent(line) != indent or not (stripped.startswith("- ") or stripped == "-"):
            raise FrontmatterError(f"unsupported list item: {line!r}")
        items.append(_value(_strip_comment(stripped[1:]).strip()))
    return items


def _value(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(item) for item in _split_flow(text[1:-1])]
    if text.startswith("{"):
        raise FrontmatterError(f"flow mappings are not supported: {text!r}")
    return _scalar(text)


def _split_flow(text: str) -> list[str]:
    items: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote:
            current += char
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
            current += char
        elif char == ",":
            items.append(current.strip())
            current = ""
        else:
            current += char
    if quote:
        raise FrontmatterError(f"unterminated quote in {text!r}")
    if current.strip():
        items.append(current.strip())
    return [item for item in items if item]


def _scalar(text: str) -> Any:
    text = text.strip()
    if not text or text in ("~", "null", "Null", "NULL"):
        return None
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise FrontmatterError(f"unterminated string: {text!r}")
        try:
            value = json.loads(text)
        except ValueError as error:
            raise FrontmatterError(f"invalid double-quoted string: {text!r}") from error
        return str(value)
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise FrontmatterError(f"unterminated string: {text!r}")
        return text[1:-1].replace("''", "'")
    return text


# ---------------------------------------------------------------------------------------------
# Definitions


class AgentDefinition(PiModel):
    """One agent definition. JSON (``model_dump()``) is camelCase: ``systemPrompt``, ..."""

    name: str
    description: str
    tools: list[str] | None = None
    """Tool names the child gets (a subset of the session's tools); ``None``: all of them."""
    model: str | None = None
    """``"provider/id"`` or a model id; ``None``: the session's model (and thinking level)."""
    system_prompt: str = ""
    """The Markdown body, appended to the child's base system prompt."""
    source: AgentSource = "user"
    status: DefinitionStatus = "active"
    origin: str | None = None
    """Where an imported definition came from (a file name), for the confirmation prompt."""

    @property
    def needs_confirmation(self) -> bool:
        return self.status == "pending"


def _tool_list(value: Any) -> list[str] | None:
    """pi's ``parseToolList``: a comma string or a list of strings; anything else: no list."""
    if isinstance(value, str):
        raw: list[Any] = value.split(",")
    elif isinstance(value, list):
        raw = value
    else:
        return None
    tools = [item.strip() for item in raw if isinstance(item, str) and item.strip()]
    return tools or None


def parse_agent_definition(
    markdown: str,
    *,
    source: AgentSource = "user",
    status: DefinitionStatus = "active",
    origin: str | None = None,
) -> AgentDefinition:
    """Parse a Markdown agent definition. Raises :class:`DefinitionError` when it is not one
    (pi skips such files: frontmatter ``name`` and ``description`` must be strings)."""
    try:
        frontmatter, body = parse_frontmatter(markdown)
    except FrontmatterError as error:
        raise DefinitionError(f"Invalid frontmatter: {error}") from error
    name = frontmatter.get("name")
    description = frontmatter.get("description")
    if not isinstance(name, str) or not name.strip() or not isinstance(description, str) or not description.strip():
        raise DefinitionError("An agent definition needs a `name` and a `description` in its frontmatter")
    name = name.strip()
    if "\n" in name:
        raise DefinitionError("An agent name must be a single line")
    model = frontmatter.get("model")
    return AgentDefinition(
        name=name,
        description=description.strip(),
        tools=_tool_list(frontmatter.get("tools")),
        model=model.strip() if isinstance(model, str) and model.strip() else None,
        system_prompt=body,
        source=source,
        status=status,
        origin=origin,
    )


_PLAIN_SAFE = re.compile(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`][^#\n]*$")


_YAML_SPECIAL = re.compile(
    r"^(?:true|false|yes|no|on|off|null|~|[-+]?(?:\.?\d[\d_.eE+-]*|\.inf|\.nan))$", re.IGNORECASE
)


def _yaml_string(value: str) -> str:
    """``value`` as a YAML scalar that any YAML parser (pi's included) reads back as this string."""
    plain = _PLAIN_SAFE.match(value) and ": " not in value and not value.endswith((" ", ":"))
    if plain and not _YAML_SPECIAL.match(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def definition_to_markdown(definition: AgentDefinition) -> str:
    """The definition as a Markdown file (for export and the settings editor); parses back equal."""
    lines = ["---", f"name: {_yaml_string(definition.name)}", f"description: {_yaml_string(definition.description)}"]
    if definition.tools:
        if all(_PLAIN_SAFE.match(tool) and "," not in tool for tool in definition.tools):
            lines.append(f"tools: {', '.join(definition.tools)}")
        else:
            quoted = (json.dumps(tool, ensure_ascii=False) for tool in definition.tools)
            lines.append("tools: [" + ", ".join(quoted) + "]")
    if definition.model:
        lines.append(f"model: {_yaml_string(definition.model)}")
    lines.append("---")
    body = definition.system_prompt.strip()
    return "\n".join(lines) + "\n\n" + (body + "\n" if body else "")


def format_agent_list(agents: Sequence[AgentDefinition], max_items: int) -> tuple[str, int]:
    """pi's ``formatAgentList``: ``"name (source): description; ..."`` and how many were left out."""
    if not agents:
        return "none", 0
    listed = agents[:max_items]
    return "; ".join(f"{agent.name} ({agent.source}): {agent.description}" for agent in listed), len(agents) - len(
        listed
    )


# ---------------------------------------------------------------------------------------------
# Built-ins (package data)

BUILTIN_NAMES = ("scout", "planner", "reviewer", "worker")
_builtins: tuple[AgentDefinition, ...] | None = None


def builtin_definitions() -> list[AgentDefinition]:
    """The shipped definitions (read once from ``py_agent/tools/agents/*.md``)."""
    global _builtins
    if _builtins is None:
        from importlib import resources

        folder = resources.files(__package__ or "py_agent.tools").joinpath("agents")
        loaded = []
        for name in BUILTIN_NAMES:
            text = folder.joinpath(f"{name}.md").read_text(encoding="utf-8")
            loaded.append(parse_agent_definition(text, source="builtin"))
        _builtins = tuple(loaded)
    return [definition.model_copy() for definition in _builtins]


# ---------------------------------------------------------------------------------------------
# Registry

RegistryListener: TypeAlias = Callable[["AgentRegistry"], Any]


class AgentRegistry:
    """Built-in and user agent definitions.

    A user definition with a built-in's name replaces it (deleting the user definition brings the
    built-in back); built-ins themselves cannot be changed or deleted. Listeners are called after
    every change (the web layer saves ``to_records()`` then).
    """

    def __init__(
        self,
        user: Iterable[AgentDefinition | Mapping[str, Any]] = (),
        *,
        builtins: bool | Sequence[AgentDefinition] = True,
    ) -> None:
        if builtins is True:
            self._builtin = builtin_definitions()
        elif builtins is False:
            self._builtin = []
        else:
            self._builtin = [d.model_copy(update={"source": "builtin", "status": "active"}) for d in builtins]
        self._user: dict[str, AgentDefinition] = {}
        self._listeners: list[RegistryListener] = []
        for item in user:
            definition = _as_definition(item)
            self._user[definition.name] = definition

    # -- reading ---------------------------------------------------------------------------------

    def builtins(self) -> list[AgentDefinition]:
        return list(self._builtin)

    def user_definitions(self) -> list[AgentDefinition]:
        return list(self._user.values())

    def all(self) -> list[AgentDefinition]:
        """Every effective definition, pending ones included: built-ins first (or the user
        definitions replacing them, in their place), then the other user definitions."""
        result = [self._user.get(d.name, d) for d in self._builtin]
        builtin_names = {d.name for d in self._builtin}
        result.extend(d for d in self._user.values() if d.name not in builtin_names)
        return result

    def available(self) -> list[AgentDefinition]:
        """The definitions that run without confirmation."""
        return [d for d in self.all() if d.status == "active"]

    def get(self, name: str) -> AgentDefinition | None:
        if name in self._user:
            return self._user[name]
        return next((d for d in self._builtin if d.name == name), None)

    def builtin(self, name: str) -> AgentDefinition | None:
        return next((d for d in self._builtin if d.name == name), None)

    def is_builtin(self, name: str) -> bool:
        return name not in self._user and self.builtin(name) is not None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    # -- changing ----------------------------------------------------------------------------------

    def save(
        self,
        definition: AgentDefinition | Mapping[str, Any] | str,
        *,
        previous_name: str | None = None,
        status: DefinitionStatus | None = None,
    ) -> AgentDefinition:
        """Add or replace a user definition (a model, a record or Markdown), e.g. from the settings
        editor. ``previous_name`` renames: the user definition under that name is removed. A
        definition saved by the user is ``"active"`` unless ``status`` says otherwise."""
        parsed = _as_definition(definition)
        parsed = parsed.model_copy(update={"source": "user", "status": status or "active"})
        if previous_name is not None and previous_name != parsed.name:
            self._user.pop(previous_name, None)
        self._user[parsed.name] = parsed
        self._changed()
        return parsed

    def import_markdown(self, markdown: str, *, origin: str | None = None) -> AgentDefinition:
        """Add a definition read from a file: ``"pending"`` until :meth:`confirm`. Raises
        :class:`DefinitionError` if the text is not a definition."""
        definition = parse_agent_definition(markdown, source="user", status="pending", origin=origin)
        self._user[definition.name] = definition
        self._changed()
        return definition

    def confirm(self, name: str) -> AgentDefinition:
        """Mark an imported definition as confirmed (it runs from now on)."""
        definition = self._user.get(name)
        if definition is None:
            raise KeyError(name)
        if definition.status != "active":
            definition = definition.model_copy(update={"status": "active"})
            self._user[name] = definition
            self._changed()
        return definition

    def delete(self, name: str) -> bool:
        """Delete a user definition; False if there is none of that name (built-ins stay)."""
        if name not in self._user:
            return False
        del self._user[name]
        self._changed()
        return True

    # -- persistence and change listeners -------------------------------------------------------

    def to_records(self) -> list[dict[str, Any]]:
        """The user definitions as JSON records (camelCase), for IndexedDB."""
        return [definition.model_dump(mode="json") for definition in self._user.values()]

    def load_records(self, records: Iterable[Mapping[str, Any]]) -> list[str]:
        """Replace the user definitions with stored records; returns the problems of the records that
        were skipped (one message each) instead of failing on them."""
        user: dict[str, AgentDefinition] = {}
        problems: list[str] = []
        for record in records:
            try:
                definition = _as_definition(record).model_copy(update={"source": "user"})
            except (DefinitionError, ValueError) as error:
                problems.append(str(error))
                continue
            user[definition.name] = definition
        self._user = user
        self._changed()
        return problems

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        """Call ``listener(registry)`` after every change; returns a remover."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener(self)


def _as_definition(value: AgentDefinition | Mapping[str, Any] | str) -> AgentDefinition:
    if isinstance(value, AgentDefinition):
        return value
    if isinstance(value, str):
        return parse_agent_definition(value)
    try:
        definition = AgentDefinition.model_validate(dict(value))
    except ValueError as error:
        raise DefinitionError(f"Invalid agent definition record: {error}") from error
    if not definition.name.strip() or not definition.description.strip():
        raise DefinitionError("An agent definition needs a `name` and a `description`")
    return definition


# ---------------------------------------------------------------------------------------------
# Persistence over a key/value backend (the web layer's storage)


class KeyValueBackend(Protocol):
    """The part of ``py_agent.app.storage.StorageBackend`` used here."""

    async def kv_get(self, store: str, key: str) -> Any: ...

    async def kv_put(self, store: str, key: str, value: Any) -> None: ...


DEFAULT_STORE = "settings"
DEFAULT_KEY = "subagent.agents"


async def load_user_definitions(
    backend: KeyValueBackend, registry: AgentRegistry, *, store: str = DEFAULT_STORE, key: str = DEFAULT_KEY
) -> list[str]:
    """Load the stored user definitions into ``registry``; returns the problems of skipped records."""
    records = await backend.kv_get(store, key)
    if not isinstance(records, list):
        return [] if records is None else ["Stored agent definitions are not a list; ignored"]
    return registry.load_records(record for record in records if isinstance(record, Mapping))


async def save_user_definitions(
    backend: KeyValueBackend, registry: AgentRegistry, *, store: str = DEFAULT_STORE, key: str = DEFAULT_KEY
) -> None:
    await backend.kv_put(store, key, registry.to_records())
