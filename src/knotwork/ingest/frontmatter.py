"""Read a note's YAML frontmatter into keyed entries that know their file lines.

The block is the YAML between a first line ``---`` and the next ``---`` or ``...``.
It is composed once with the C loader when available; each top-level key keeps the
line span it covers, so its facts can cite the exact lines. A YAML error never fails
the note: it becomes a non-fatal ``Issue`` at the file line of the problem and the
frontmatter then yields nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from ..types import Issue, Span

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_DELIMITER = "---"
_CLOSERS = ("---", "...")


@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level frontmatter key, its constructed value and the lines it covers."""

    key: str
    value: object
    span: Span
    line_text: str  # the key's first line, stripped: the supporting text of its facts


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """What the frontmatter block yields; ``body_start`` is the 0-based first body line."""

    body_start: int
    entries: tuple[Entry, ...] = ()
    issues: tuple[Issue, ...] = ()


def closing_line(lines: Sequence[str]) -> int | None:
    """Return the 0-based index of the closing delimiter, or None when there is no block."""
    if not lines or lines[0].rstrip() != _DELIMITER:
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in _CLOSERS:
            return i
    return None


def read_frontmatter(path: str, lines: Sequence[str]) -> Frontmatter:
    """Parse the frontmatter block of ``lines`` (file lines without line breaks)."""
    close = closing_line(lines)
    if close is None:
        if lines and lines[0].rstrip() == _DELIMITER:
            # A lone opening "---" is a thematic break to Markdown; say so, parse it as body.
            issue = Issue(path, "unterminated YAML frontmatter", 1, fatal=False)
            return Frontmatter(0, (), (issue,))
        return Frontmatter(0)
    try:
        entries = _entries(path, lines, close)
    except yaml.YAMLError as exc:
        return Frontmatter(close + 1, (), (_yaml_issue(path, exc),))
    return Frontmatter(close + 1, entries[0], entries[1])


def _yaml_issue(path: str, exc: yaml.YAMLError) -> Issue:
    """Turn a YAML error into a non-fatal issue at its file line (YAML starts at line 2)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context and problem else problem or str(exc)
    line = mark.line + 2 if mark is not None else 1
    return Issue(path, f"malformed YAML frontmatter: {text}", line, fatal=False)


def _entries(
    path: str, lines: Sequence[str], close: int
) -> tuple[tuple[Entry, ...], tuple[Issue, ...]]:
    """Compose the block once and construct each top-level value on its own.

    Constructing per key means one bad value (``date: 2024-02-30``) costs that key only.
    """
    loader = _Loader("\n".join(lines[1:close]))
    try:
        node = loader.get_single_node()
        if node is None:
            return (), ()
        if not isinstance(node, yaml.MappingNode):
            return (), (Issue(path, "frontmatter is not a mapping", 2, fatal=False),)
        loader.flatten_mapping(node)  # resolve "<<: *anchor" merge keys
        key_lines = [k.start_mark.line + 2 for k, _ in node.value]
        entries: list[Entry] = []
        issues: list[Issue] = []
        for i, (knode, vnode) in enumerate(node.value):
            first = key_lines[i]
            last = key_lines[i + 1] - 1 if i + 1 < len(key_lines) else close
            last = _trim_end(lines, first, last)
            try:
                key = loader.construct_object(knode, deep=True)
                value = loader.construct_object(vnode, deep=True)
            except (yaml.YAMLError, ValueError, TypeError) as exc:
                reason = f"malformed YAML frontmatter value: {exc}".splitlines()[0]
                issues.append(Issue(path, reason, first, fatal=False))
                continue
            entries.append(Entry(str(key), value, Span(first, last), lines[first - 1].strip()))
        return tuple(entries), tuple(issues)
    finally:
        loader.dispose()


def _trim_end(lines: Sequence[str], first: int, last: int) -> int:
    """Drop blank and comment lines that end a key's span (1-based, inclusive)."""
    while last > first:
        text = lines[last - 1].strip()
        if text and not text.startswith("#"):
            break
        last -= 1
    return last
