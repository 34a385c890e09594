"""The workspace tools: ``read``, ``write``, ``edit``, ``ls``, ``grep`` and ``find``.

Names, parameters, descriptions, result texts and ``details`` follow pi's coding-agent tools of
the same names (``@earendil-works/pi-coding-agent``, ``dist/core/tools/*.js``), over a
:class:`~py_agent.tools.workspace.Workspace` instead of a filesystem. Where pi shells out
(ripgrep for ``grep``, fd for ``find``) the search runs here in Python with the same output
format. Failures raise (the agent turns them into error results). Pure Python.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import Any, overload

from ..ai._util import utf16_len
from ..ai.abort import AbortSignal
from ..ai.types import ImageContent, TextContent
from ..ai.validation import TypeBoxSchema
from ..core.types import AgentTool, AgentToolResult, AgentToolUpdateCallback
from ._text import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    EditError,
    apply_edits,
    detect_line_ending,
    format_size,
    generate_diff,
    normalize_to_lf,
    restore_line_endings,
    strip_bom,
    truncate_head,
    truncate_line,
)
from .gitignore import IgnoreRules
from .workspace import StaleFileError, Workspace, WorkspaceFile, normalize_path

__all__ = [
    "FILE_TOOL_NAMES",
    "GrepMatches",
    "GrepSearcher",
    "ToolError",
    "compile_grep_pattern",
    "glob_to_regex",
    "make_edit_tool",
    "make_find_tool",
    "make_grep_tool",
    "make_ls_tool",
    "make_read_tool",
    "make_workspace_tools",
    "make_write_tool",
    "python_grep_search",
    "regex_error_text",
]

FILE_TOOL_NAMES = ("read", "write", "edit", "ls", "grep", "find")
LS_DEFAULT_LIMIT = 500
GREP_DEFAULT_LIMIT = 100
FIND_DEFAULT_LIMIT = 1000
MAX_INLINE_IMAGE_BYTES = 4_500_000
"""Images above this are not sent to the model (pi resizes them; the page does not)."""
MAX_TEXT_FILE_BYTES = 10 * 1024 * 1024
"""``read`` and ``edit`` refuse text files above this (the page holds and decodes them whole)."""
MAX_DIFF_BYTES = 256 * 1024
"""A ``write``'s diff above this is left out of its details (kept with the session)."""
_NO_LIMIT = 2**53 - 1


class ToolError(Exception):
    """A tool failure; its message becomes the error result's text."""


def _text_result(text: str, details: Any = None) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details=details)


def _check_abort(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise ToolError("Operation aborted")


def _int_arg(value: Any) -> int | None:
    return None if value is None else int(value)


def _image_mime(data: bytes) -> str | None:
    """The image types pi sends as attachments, sniffed from the bytes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _shown_path(path: str) -> str:
    """The workspace path for ``path``, where pi's texts show the path resolved against its cwd."""
    try:
        return normalize_path(path, allow_root=True)
    except ValueError:
        return path


# pi's texts for these are Node's file-system errors.
READ_DIRECTORY_ERROR = "EISDIR: illegal operation on a directory, read"


def _require_file(workspace: Workspace, path: str) -> WorkspaceFile:
    file = workspace.get(path)
    if file is not None:
        return file
    if workspace.is_dir(path):
        raise ToolError(READ_DIRECTORY_ERROR)
    raise ToolError(f"ENOENT: no such file or directory, access '{_shown_path(path)}'")


def _check_size(path: str, file: WorkspaceFile, verb: str) -> None:
    if file.size > MAX_TEXT_FILE_BYTES:
        raise ToolError(
            f"Could not {verb} {path}: it is {format_size(file.size)}, over the {format_size(MAX_TEXT_FILE_BYTES)} "
            "limit for files the read and edit tools handle. Use grep to search it, or the python tool to work on it."
        )


def _check_fresh(workspace: Workspace, path: str) -> None:
    try:
        workspace.check_not_stale(path)
    except StaleFileError as error:
        raise ToolError(str(error)) from None


# ---------------------------------------------------------------------------------------------
# read


READ_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
            "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "number", "description": "Maximum number of lines to read"},
        },
        "required": ["path"],
    }
)


def _read_text(path: str, text: str, offset: int | None, limit: int | None) -> AgentToolResult:
    all_lines = text.split("\n")
    total = len(all_lines)
    start = max(0, offset - 1) if offset else 0
    start_display = start + 1
    if start >= total:
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    user_limited: int | None = None
    if limit is not None:
        end = min(start + max(0, limit), total)
        selected = "\n".join(all_lines[start:end])
        user_limited = end - start
    else:
        selected = "\n".join(all_lines[start:])
    truncation = truncate_head(selected)
    details: Any = None
    if truncation.first_line_exceeds_limit:
        size = format_size(len(all_lines[start].encode("utf-8", "surrogatepass")))
        output = (
            f"[Line {start_display} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use grep to search it, or the python tool to read part of it]"
        )
        details = {"truncation": truncation.to_json()}
    elif truncation.truncated:
        end_display = start_display + truncation.output_lines - 1
        shown = f"Showing lines {start_display}-{end_display} of {total}"
        if truncation.truncated_by != "lines":
            shown += f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        output = f"{truncation.content}\n\n[{shown}. Use offset={end_display + 1} to continue.]"
        details = {"truncation": truncation.to_json()}
    elif user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        next_offset = start + user_limited + 1
        output = f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={next_offset} to continue.]"
    else:
        output = truncation.content
    return _text_result(output, details)


def make_read_tool(workspace: Workspace) -> AgentTool:
    async def execute(
        _id: str, params: dict[str, Any], signal: AbortSignal | None, _on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        path = params["path"]
        file = _require_file(workspace, path)
        text = file.text()
        if text is not None:
            _check_size(path, file, "read")
            result = _read_text(path, text, _int_arg(params.get("offset")), _int_arg(params.get("limit")))
            workspace.mark_seen(path)
            return result
        workspace.mark_seen(path)
        data = file.to_bytes()
        mime = _image_mime(data)
        if mime is None:
            raise ToolError(
                f"{path} is a binary file ({format_size(len(data))}) and cannot be shown as text. "
                "Use the python tool to inspect it."
            )
        if len(data) > MAX_INLINE_IMAGE_BYTES:
            note = f"Read image file [{mime}]\n[Image omitted: it is larger than the inline image size limit.]"
            return _text_result(note)
        return AgentToolResult(
            content=[
                TextContent(text=f"Read image file [{mime}]"),
                ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime),
            ]
        )

    return AgentTool(
        name="read",
        label="read",
        description=(
            "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as "
            f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
            f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you need "
            "the full file, continue with offset until complete."
        ),
        parameters=READ_SCHEMA,
        execute=execute,
    )


# ---------------------------------------------------------------------------------------------
# write


WRITE_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
            "content": {"type": "string", "description": "Content to write to the file"},
        },
        "required": ["path", "content"],
    }
)


def _write_details(old: WorkspaceFile | None, content: str) -> dict[str, Any]:
    """What a ``write`` changed, for its card (pi's ``write`` has no details): ``created`` and,
    over a text file, the diff as ``edit`` gives it (``diff``, ``firstChangedLine``), or why
    there is none (``replacedBinary``, ``diffOmitted``)."""
    if old is None:
        return {"created": True}  # the card shows the content written
    details: dict[str, Any] = {"created": False}
    before = old.text()
    if before is None:
        details["replacedBinary"] = True
        return details
    if utf16_len(before) + utf16_len(content) > MAX_DIFF_BYTES:
        details["diffOmitted"] = True
        return details
    diff, first_changed = generate_diff(normalize_to_lf(strip_bom(before)[1]), normalize_to_lf(strip_bom(content)[1]))
    details["diff"] = diff
    if first_changed is not None:
        details["firstChangedLine"] = first_changed
    return details


def make_write_tool(workspace: Workspace) -> AgentTool:
    async def execute(
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        _on_update: AgentToolUpdateCallback | None,
    ) -> AgentToolResult:
        _check_abort(signal)
        path, content = params["path"], params["content"]
        old = workspace.get(path) if isinstance(content, str) else None
        if old is not None:
            _check_fresh(workspace, path)
        await workspace.write(path, content, source="write", change=tool_call_id)
        return _text_result(f"Successfully wrote {utf16_len(content)} bytes to {path}", _write_details(old, content))

    return AgentTool(
        name="write",
        label="write",
        description=(
            "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
            "Automatically creates parent directories."
        ),
        parameters=WRITE_SCHEMA,
        execute=execute,
    )


# ---------------------------------------------------------------------------------------------
# edit


EDIT_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": (
                                "Exact text for one targeted replacement. It must be unique in the original file and "
                                "must not overlap with any other edits[].oldText in the same call."
                            ),
                        },
                        "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
                    },
                    "required": ["oldText", "newText"],
                    "additionalProperties": False,
                },
                "description": (
                    "One or more targeted replacements. Each edit is matched against the original file, not "
                    "incrementally. Do not include overlapping or nested edits. If two changes touch the same block or "
                    "nearby lines, merge them into one edit instead."
                ),
            },
        },
        "required": ["path", "edits"],
        "additionalProperties": False,
    }
)


def prepare_edit_arguments(raw: Any) -> Any:
    """pi's ``prepareEditArguments``: ``edits`` given as a JSON string is parsed, and the single
    ``oldText``/``newText`` form (also ``old_text``/``new_text``) becomes one entry of ``edits``."""
    if not isinstance(raw, dict):
        return raw
    args = dict(raw)
    if isinstance(args.get("edits"), str):
        import json

        try:
            parsed = json.loads(args["edits"])
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
    for old_key, new_key in (("oldText", "newText"), ("old_text", "new_text")):
        old, new = args.get(old_key), args.get(new_key)
        if isinstance(old, str) and isinstance(new, str):
            edits = list(args["edits"]) if isinstance(args.get("edits"), list) else []
            edits.append({"oldText": old, "newText": new})
            args.pop(old_key)
            args.pop(new_key)
            args["edits"] = edits
    return args


def make_edit_tool(workspace: Workspace) -> AgentTool:
    async def execute(
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None,
        _on_update: AgentToolUpdateCallback | None,
    ) -> AgentToolResult:
        _check_abort(signal)
        path, edits = params["path"], params.get("edits")
        if not isinstance(edits, list) or not edits:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        file = workspace.get(path)
        if file is None:
            if workspace.is_dir(path):
                raise ToolError(READ_DIRECTORY_ERROR)
            raise ToolError(f"Could not edit file: {path}. Error code: ENOENT.")
        raw = file.text()
        if raw is None:
            raise ToolError(
                f"Could not edit file: {path}. It is a binary file ({format_size(file.size)}); "
                "the edit tool changes text files only. Use the python tool to change it."
            )
        _check_size(path, file, "edit")
        _check_fresh(workspace, path)
        bom, content = strip_bom(raw)
        ending = detect_line_ending(content)
        try:
            base, new = apply_edits(normalize_to_lf(content), [(e["oldText"], e["newText"]) for e in edits], path)
        except EditError as error:
            raise ToolError(str(error)) from None
        _check_abort(signal)
        await workspace.write(path, bom + restore_line_endings(new, ending), source="edit", change=tool_call_id)
        diff, first_changed = generate_diff(base, new)
        details: dict[str, Any] = {"diff": diff}
        if first_changed is not None:
            details["firstChangedLine"] = first_changed
        return _text_result(f"Successfully replaced {len(edits)} block(s) in {path}.", details)

    return AgentTool(
        name="edit",
        label="edit",
        description=(
            "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
            "non-overlapping region of the original file. If two changes affect the same block or nearby lines, "
            "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions "
            "just to connect distant changes."
        ),
        parameters=EDIT_SCHEMA,
        execute=execute,
        prepare_arguments=prepare_edit_arguments,
    )


# ---------------------------------------------------------------------------------------------
# ls


LS_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
        },
    }
)


def _with_notices(output: str, notices: Sequence[str]) -> str:
    return f"{output}\n\n[{'. '.join(notices)}]" if notices else output


def make_ls_tool(workspace: Workspace) -> AgentTool:
    async def execute(
        _id: str, params: dict[str, Any], signal: AbortSignal | None, _on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        path = params.get("path") or "."
        limit = _int_arg(params.get("limit"))
        effective = LS_DEFAULT_LIMIT if limit is None else limit
        normalize_path(path, allow_root=True)
        if not workspace.exists(path):
            raise ToolError(f"Path not found: {path}")
        if not workspace.is_dir(path):
            raise ToolError(f"Not a directory: {path}")
        entries = sorted(workspace.list_dir(path), key=lambda entry: (entry[0].lower(), entry[0]))
        results = [name + ("/" if is_dir else "") for name, is_dir in entries[: max(0, effective)]]
        if not results:
            return _text_result("(empty directory)")
        truncation = truncate_head("\n".join(results), max_lines=_NO_LIMIT)
        details: dict[str, Any] = {}
        notices: list[str] = []
        if len(entries) > effective:
            notices.append(f"{effective} entries limit reached. Use limit={effective * 2} for more")
            details["entryLimitReached"] = effective
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_json()
        return _text_result(_with_notices(truncation.content, notices), details or None)

    return AgentTool(
        name="ls",
        label="ls",
        description=(
            "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
            f"Includes dotfiles. Output is truncated to {LS_DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
            "(whichever is hit first)."
        ),
        parameters=LS_SCHEMA,
        execute=execute,
    )


# ---------------------------------------------------------------------------------------------
# globs (ripgrep's --glob and fd's --glob, as far as the workspace needs them)


@lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a glob: ``*``/``?`` stay inside one name, ``**`` crosses folders,
    ``[...]`` classes (``[!...]`` negated) and ``{a,b}`` alternatives."""
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as error:
        raise ToolError(f"Invalid glob {pattern!r}: {error}") from None


def _glob_matcher(glob: str) -> Callable[[str], bool]:
    """ripgrep's ``--glob``: a glob without '/' matches a file's name at any depth, one with '/'
    the path below the searched folder; a leading '!' excludes."""
    negate = glob.startswith("!")
    pattern = glob[1:] if negate else glob
    anchored = "/" in pattern.rstrip("/")
    regex = glob_to_regex(pattern.lstrip("/") if anchored else pattern)

    def matches(relative: str) -> bool:
        hit = bool(regex.match(relative if anchored else relative.rsplit("/", 1)[-1]))
        return hit != negate

    return matches


# ---------------------------------------------------------------------------------------------
# grep


GREP_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
            "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
            "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
            "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
            "literal": {
                "type": "boolean",
                "description": "Treat pattern as literal string instead of regex (default: false)",
            },
            "context": {
                "type": "number",
                "description": "Number of lines to show before and after each match (default: 0)",
            },
            "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
        },
        "required": ["pattern"],
    }
)

_FILES_PER_YIELD = 50


def _searched_files(workspace: Workspace, path: str, glob: str | None) -> tuple[list[tuple[str, WorkspaceFile]], bool]:
    """(display path, file) pairs under ``path``, and whether ``path`` is a folder."""
    normalize_path(path, allow_root=True)
    if workspace.is_file(path):
        file = workspace.get(path)
        assert file is not None
        return [(file.name, file)], False
    if not workspace.is_dir(path):
        raise ToolError(f"Path not found: {_shown_path(path)}")
    folder = normalize_path(path, allow_root=True)
    prefix = folder + "/" if folder else ""
    matcher = _glob_matcher(glob) if glob else None
    rules = IgnoreRules.of(workspace)
    pairs = []
    for file in workspace.files(folder):
        relative = file.path[len(prefix) :]
        if (matcher is None or matcher(relative)) and not rules.ignored(file.path, below=folder):
            pairs.append((relative, file))
    return pairs, True


GrepMatches = list[tuple[int, list[int]]]
GrepSearcher = Callable[[re.Pattern[str], Sequence[str], int, AbortSignal | None], Awaitable[GrepMatches]]
"""How ``grep`` searches: ``(regex, texts, limit, signal)`` -> for each text with matching lines,
``(its index in texts, the 1-based numbers of those lines)``, in order, at most ``limit`` line
numbers in all. A text's lines are ``text.split("\\n")`` without a last empty one (the texts are
normalized to LF; a binary file's text is empty); a line matches when ``regex.search(line)``
finds something. Raises :class:`ToolError` (abort, time limit). The default,
:func:`python_grep_search`, runs Python's ``re`` here; the page injects one that runs in a worker
it can stop (``py_agent/browser/grep.py``)."""


class _GrepTexts(Sequence[str]):
    """The searched files' texts, normalized to LF when first read (a search that reaches its
    limit early never reads the rest); a binary file is an empty text (skipped, as ripgrep does)."""

    def __init__(self, files: list[WorkspaceFile]) -> None:
        self._files = files
        self._texts: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._files)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        text = self._texts.get(index)
        if text is None:
            raw = self._files[index].text()
            text = self._texts[index] = "" if raw is None else normalize_to_lf(raw)
        return text


async def python_grep_search(
    regex: re.Pattern[str], texts: Sequence[str], limit: int, signal: AbortSignal | None
) -> GrepMatches:
    """The default :data:`GrepSearcher`: Python's ``re``, yielding to the event loop now and then."""
    found: GrepMatches = []
    total = 0
    for index, text in enumerate(texts):
        if index and index % _FILES_PER_YIELD == 0:
            await asyncio.sleep(0)  # keep the page responsive during long searches
        _check_abort(signal)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        hits: list[int] = []
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                hits.append(number)
                total += 1
                if total >= limit:
                    break
        if hits:
            found.append((index, hits))
        if total >= limit:
            break
    return found


def compile_grep_pattern(pattern: str, *, literal: bool = False, ignore_case: bool = False) -> re.Pattern[str]:
    """grep's pattern as Python compiles it (a bad pattern raises the same :class:`ToolError`
    whichever searcher runs it)."""
    try:
        return re.compile(re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as error:
        raise ToolError(regex_error_text(pattern, error)) from None


# Python's words for a bad pattern, as ripgrep (pi's grep) words them, and how many characters
# from the error's position ripgrep underlines (None: from the position to the closing brace).
_RG_REGEX_ERRORS: tuple[tuple[str, str, int | None], ...] = (
    ("missing ), unterminated subpattern", "unclosed group", 1),
    ("unbalanced parenthesis", "unopened group", 1),
    ("unterminated character set", "unclosed character class", 1),
    ("nothing to repeat", "repetition operator missing expression", 1),
    ("bad escape", "unrecognized escape sequence", 2),
    ("bad character range", "invalid character class range, the start must be <= the end", 3),
    ("min repeat greater than max repeat", "invalid repetition count range, the start must be <= the end", None),
    ("unknown extension", "unrecognized flag", 1),
)
# Where ripgrep's caret is to the right of Python's error position.
_RG_CARET_SHIFT = {"unrecognized flag": 1}


def regex_error_text(pattern: str, error: re.error) -> str:
    """ripgrep's text for a pattern that does not compile: the pattern, a caret line under the
    error and its message (Python's message where ripgrep has no equivalent)."""
    message, position, width = str(error.msg), error.pos or 0, 1
    for python_words, rg_words, span in _RG_REGEX_ERRORS:
        if message.startswith(python_words):
            message = rg_words
            if span is None:  # x{3,1}: ripgrep underlines the whole counted repetition
                position = max(0, pattern.rfind("{", 0, position + 1))
                end = pattern.find("}", position)
                width = (end + 1 if end >= 0 else len(pattern)) - position
            else:
                width = span
                position += _RG_CARET_SHIFT.get(rg_words, 0)
            break
    if "\n" in pattern:
        return f"regex parse error:\n    {pattern}\nerror: {message}"
    return f"regex parse error:\n    {pattern}\n    {' ' * position}{'^' * max(1, width)}\nerror: {message}"


def make_grep_tool(workspace: Workspace, searcher: GrepSearcher | None = None) -> AgentTool:
    search = searcher or python_grep_search

    async def execute(
        _id: str, params: dict[str, Any], signal: AbortSignal | None, _on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        pattern: str = params["pattern"]
        path = params.get("path") or "."
        glob = params.get("glob") or None
        context = max(0, _int_arg(params.get("context")) or 0)
        limit = _int_arg(params.get("limit"))
        effective = max(1, GREP_DEFAULT_LIMIT if limit is None else limit)
        regex = compile_grep_pattern(
            pattern, literal=bool(params.get("literal")), ignore_case=bool(params.get("ignoreCase"))
        )
        files, is_dir = _searched_files(workspace, path, glob if isinstance(glob, str) else None)
        if not is_dir and glob and not _glob_matcher(glob)(files[0][0]):
            files = []

        texts = _GrepTexts([file for _shown, file in files])
        found = await search(regex, texts, effective, signal) if files else []
        _check_abort(signal)

        output: list[str] = []
        matches = 0
        lines_truncated = False
        for index, numbers in found:
            shown = files[index][0]
            lines = texts[index].split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            for number in numbers:
                matches += 1
                first = max(1, number - context)
                last = min(len(lines), number + context)
                for current in range(first, last + 1):
                    shown_line, cut = truncate_line(lines[current - 1].replace("\r", ""))
                    lines_truncated = lines_truncated or cut
                    sep = ":" if current == number else "-"
                    output.append(f"{shown}{sep}{current}{sep} {shown_line}")
        limit_reached = matches >= effective
        if matches == 0:
            return _text_result("No matches found")
        truncation = truncate_head("\n".join(output), max_lines=_NO_LIMIT)
        details: dict[str, Any] = {}
        notices: list[str] = []
        if limit_reached:
            notices.append(f"{effective} matches limit reached. Use limit={effective * 2} for more, or refine pattern")
            details["matchLimitReached"] = effective
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_json()
        if lines_truncated:
            notices.append(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines")
            details["linesTruncated"] = True
        return _text_result(_with_notices(truncation.content, notices), details or None)

    return AgentTool(
        name="grep",
        label="grep",
        description=(
            "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
            "Respects .gitignore. Patterns are Python regular expressions. Binary files are skipped. "
            f"Output is truncated to {GREP_DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
            f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
        ),
        parameters=GREP_SCHEMA,
        execute=execute,
    )


# ---------------------------------------------------------------------------------------------
# find


FIND_SCHEMA = TypeBoxSchema(
    {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
            },
            "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
            "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
        },
        "required": ["pattern"],
    }
)


def make_find_tool(workspace: Workspace) -> AgentTool:
    async def execute(
        _id: str, params: dict[str, Any], signal: AbortSignal | None, _on_update: AgentToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        pattern: str = params["pattern"]
        path = params.get("path") or "."
        limit = _int_arg(params.get("limit"))
        effective = max(1, FIND_DEFAULT_LIMIT if limit is None else limit)
        folder = normalize_path(path, allow_root=True)
        if not workspace.is_dir(folder):
            # fd's own words (pi's find runs fd), for a missing path as for a file.
            raise ToolError(
                f"[fd error]: Search path '{folder}' is not a directory.\n[fd error]: No valid search paths given."
            )
        prefix = folder + "/" if folder else ""
        # fd: a pattern without '/' matches names; one with '/' the whole path below the folder.
        full_path = "/" in pattern
        regex = glob_to_regex(pattern.lstrip("/") if full_path else pattern)
        rules = IgnoreRules.of(workspace)
        candidates: set[str] = set()
        for file in workspace.files(folder):
            relative = file.path[len(prefix) :]
            parts = relative.split("/")
            for depth in range(1, len(parts)):  # fd lists a folder that is not ignored, even if all in it is
                shown = "/".join(parts[:depth])
                if rules.ignored(prefix + shown, is_dir=True, below=folder):
                    break
                candidates.add(shown + "/")
            else:
                if not rules.ignored(file.path, below=folder):
                    candidates.add(relative)
        results = []
        for candidate in sorted(candidates):
            bare = candidate.rstrip("/")
            if regex.match(bare if full_path else bare.rsplit("/", 1)[-1]):
                results.append(candidate)
                if len(results) >= effective:
                    break
        if not results:
            return _text_result("No files found matching pattern")
        truncation = truncate_head("\n".join(results), max_lines=_NO_LIMIT)
        details: dict[str, Any] = {}
        notices: list[str] = []
        if len(results) >= effective:
            notices.append(f"{effective} results limit reached. Use limit={effective * 2} for more, or refine pattern")
            details["resultLimitReached"] = effective
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_json()
        return _text_result(_with_notices(truncation.content, notices), details or None)

    return AgentTool(
        name="find",
        label="find",
        description=(
            "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
            f"Respects .gitignore. Output is truncated to {FIND_DEFAULT_LIMIT} results or "
            f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first)."
        ),
        parameters=FIND_SCHEMA,
        execute=execute,
    )


_FACTORIES: dict[str, Callable[[Workspace], AgentTool]] = {
    "read": make_read_tool,
    "write": make_write_tool,
    "edit": make_edit_tool,
    "ls": make_ls_tool,
    "grep": make_grep_tool,
    "find": make_find_tool,
}


def make_workspace_tools(
    workspace: Workspace, names: Sequence[str] = FILE_TOOL_NAMES, *, grep_searcher: GrepSearcher | None = None
) -> list[AgentTool]:
    """The workspace tools over ``workspace`` (all of them, or those named, in that order);
    ``grep_searcher`` replaces how ``grep`` runs its regex (see :data:`GrepSearcher`)."""
    unknown = [name for name in names if name not in _FACTORIES]
    if unknown:
        raise ValueError(f"Unknown workspace tools: {', '.join(unknown)}")
    return [
        make_grep_tool(workspace, grep_searcher) if name == "grep" else _FACTORIES[name](workspace) for name in names
    ]
