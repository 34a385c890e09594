"""Text helpers of the workspace tools, ported from pi's coding agent.

``truncate_head``/``truncate_line``/``format_size`` follow ``dist/core/tools/truncate.js``; the
edit helpers follow ``edit-diff.js`` (exact match first, then pi's fuzzy match that ignores
trailing whitespace and normalizes Unicode quotes, dashes and spaces; a unified diff with line
numbers for the UI). Pure: standard library only.
"""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


def _to_fixed1(value: float) -> str:
    """JavaScript's ``value.toFixed(1)`` (ties go up on the exact binary value)."""
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{_to_fixed1(size / 1024)}KB"
    return f"{_to_fixed1(size / (1024 * 1024))}MB"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


@dataclass
class Truncation:
    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        """pi's ``TruncationResult`` shape (camelCase, as it lands in ``details``)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": False,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def truncate_head(
    content: str,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    final_newline_ends_line: bool = False,
) -> Truncation:
    """Keep the first lines that fit both limits; never a partial line.

    ``final_newline_ends_line`` counts lines as pi 1.6.0's ``splitLinesForCounting`` does (no
    empty last line after a final newline, no line in ``""``), for the subagent tool's port;
    without it (the workspace tools) the empty piece after a final newline is a line too.
    """
    total_bytes = utf8_len(content)
    lines = content.split("\n")
    if final_newline_ends_line and lines[-1] == "":
        lines.pop()
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(
            content, False, None, total_lines, total_bytes, total_lines, total_bytes, False, max_lines, max_bytes
        )
    if utf8_len(lines[0]) > max_bytes:
        return Truncation("", True, "bytes", total_lines, total_bytes, 0, 0, True, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = utf8_len(line) + (1 if index > 0 else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    output = "\n".join(kept)
    return Truncation(
        output, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(output), False, max_lines, max_bytes
    )


def keep_tail(text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The end of a long output (pi's bash keeps the tail), after a notice saying what was cut."""
    lines = text.split("\n")
    if len(lines) <= max_lines and utf8_len(text) <= max_bytes:
        return text
    kept: list[str] = []
    size = 0
    for line in reversed(lines[-max_lines:]):
        size += utf8_len(line) + 1
        if size > max_bytes:
            break
        kept.append(line)
    kept.reverse()
    notice = f"[Output truncated: showing the last {len(kept)} of {len(lines)} lines ({format_size(max_bytes)} limit)]"
    return notice + "\n" + "\n".join(kept)


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True


# ---------------------------------------------------------------------------------------------
# Edits (edit-diff.js)


class EditError(ValueError):
    """An edit that cannot be applied; the message is what the model sees."""


def detect_line_ending(content: str) -> str:
    crlf = content.find("\r\n")
    lf = content.find("\n")
    if lf == -1 or crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    return ("\ufeff", content[1:]) if content.startswith("\ufeff") else ("", content)


_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


def normalize_for_fuzzy_match(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


def _fuzzy_find(content: str, old_text: str) -> tuple[int, int, bool]:
    """(index, match length, used fuzzy match); index -1 when not found."""
    index = content.find(old_text)
    if index != -1:
        return index, len(old_text), False
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    if index == -1:
        return -1, 0, False
    return index, len(fuzzy_old), True


def _count_occurrences(content: str, old_text: str) -> int:
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    return len(normalize_for_fuzzy_match(content).split(fuzzy_old)) - 1 if fuzzy_old else 0


def apply_edits(normalized_content: str, edits: list[tuple[str, str]], path: str) -> tuple[str, str]:
    """Apply replacements matched against the same original (LF) content; returns (base, new)."""
    total = len(edits)
    normalized = [(normalize_to_lf(old), normalize_to_lf(new)) for old, new in edits]
    for index, (old, _new) in enumerate(normalized):
        if not old:
            raise EditError(
                f"oldText must not be empty in {path}."
                if total == 1
                else f"edits[{index}].oldText must not be empty in {path}."
            )
    uses_fuzzy = any(_fuzzy_find(normalized_content, old)[2] for old, _ in normalized)
    base = normalize_for_fuzzy_match(normalized_content) if uses_fuzzy else normalized_content
    matched: list[tuple[int, int, int, str]] = []  # (match index, length, edit index, new text)
    for index, (old, new) in enumerate(normalized):
        at, length, _fuzzy = _fuzzy_find(base, old)
        if at == -1:
            if total == 1:
                raise EditError(
                    f"Could not find the exact text in {path}. "
                    "The old text must match exactly including all whitespace and newlines."
                )
            raise EditError(
                f"Could not find edits[{index}] in {path}. "
                "The oldText must match exactly including all whitespace and newlines."
            )
        occurrences = _count_occurrences(base, old)
        if occurrences > 1:
            if total == 1:
                raise EditError(
                    f"Found {occurrences} occurrences of the text in {path}. "
                    "The text must be unique. Please provide more context to make it unique."
                )
            raise EditError(
                f"Found {occurrences} occurrences of edits[{index}] in {path}. "
                "Each oldText must be unique. Please provide more context to make it unique."
            )
        matched.append((at, length, index, new))
    matched.sort(key=lambda item: item[0])
    for previous, current in itertools.pairwise(matched):
        if previous[0] + previous[1] > current[0]:
            raise EditError(
                f"edits[{previous[2]}] and edits[{current[2]}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    new_content = base
    for at, length, _index, new in reversed(matched):
        new_content = new_content[:at] + new + new_content[at + length :]
    if new_content == base:
        if total == 1:
            raise EditError(
                f"No changes made to {path}. The replacement produced identical content. "
                "This might indicate an issue with special characters or the text not existing as expected."
            )
        raise EditError(f"No changes made to {path}. The replacements produced identical content.")
    return base, new_content


_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def _line_tokens(text: str) -> list[str]:
    """Lines with their newline kept, as jsdiff's ``diffLines`` tokenizes."""
    return _LINE.findall(text)


def generate_diff(old_content: str, new_content: str, context_lines: int = 4) -> tuple[str, int | None]:
    """pi's ``generateDiffString``: changed lines with numbers and a few lines of context."""
    old_tokens = _line_tokens(old_content)
    new_tokens = _line_tokens(new_content)
    parts: list[tuple[str, list[str]]] = []  # ("=", "-", "+"), lines without newline
    matcher = difflib.SequenceMatcher(a=old_tokens, b=new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(("=", [t.rstrip("\n") for t in old_tokens[i1:i2]]))
            continue
        if i2 > i1:
            parts.append(("-", [t.rstrip("\n") for t in old_tokens[i1:i2]]))
        if j2 > j1:
            parts.append(("+", [t.rstrip("\n") for t in new_tokens[j1:j2]]))
    width = len(str(max(len(old_content.split("\n")), len(new_content.split("\n")))))
    out: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None
    pad = " " * width
    for index, (kind, lines) in enumerate(parts):
        if kind != "=":
            if first_changed is None:
                first_changed = new_no
            for line in lines:
                if kind == "+":
                    out.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    out.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = index < len(parts) - 1 and parts[index + 1][0] != "="

        def show(chunk: list[str]) -> None:
            nonlocal old_no, new_no
            for line in chunk:
                out.append(f" {str(old_no).rjust(width)} {line}")
                old_no += 1
                new_no += 1

        def skip(count: int) -> None:
            nonlocal old_no, new_no
            out.append(f" {pad} ...")
            old_no += count
            new_no += count

        if last_was_change and next_is_change:
            if len(lines) <= context_lines * 2:
                show(lines)
            else:
                show(lines[:context_lines])
                skip(len(lines) - 2 * context_lines)
                show(lines[-context_lines:])
        elif last_was_change:
            show(lines[:context_lines])
            if len(lines) > context_lines:
                skip(len(lines) - context_lines)
        elif next_is_change:
            skipped = max(0, len(lines) - context_lines)
            if skipped:
                skip(skipped)
            show(lines[skipped:])
        else:
            old_no += len(lines)
            new_no += len(lines)
        last_was_change = False
    return "\n".join(out), first_changed
