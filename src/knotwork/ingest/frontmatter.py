"""Read a note's YAML frontmatter into keyed entries that know their file lines.

The block is the YAML between a first line ``---`` and the next ``---`` or ``...``.
It is composed once with the C loader when available; each top-level key keeps the
line span it covers, so its facts can cite the exact lines. A YAML error never fails
the note: it becomes a non-fatal ``Issue`` at the file line of the problem and the
frontmatter then yields nothing.
"""

from __future__ import annotations

import bisect
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
    # A block list (``- item`` lines): each item's lines and first line, so an item's facts
    # cite the item rather than the whole key. Empty for any other value.
    items: tuple[tuple[Span, str], ...] = ()


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
    except RecursionError:  # 10,000 nested "[": the body is still read
        return Frontmatter(close + 1, (), (Issue(
            path, "malformed YAML frontmatter: nested too deeply", 2, fatal=False),))
    return Frontmatter(close + 1, entries[0], entries[1])


def _yaml_issue(path: str, exc: yaml.YAMLError) -> Issue:
    """Turn a YAML error into a non-fatal issue at its file line (YAML starts at line 2)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context.startswith("while parsing a flow") and context_mark is not None:
        mark = context_mark  # the unclosed [ or {, not where the parser gave up on it
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
        # a key ends where the next key down the file begins: merged keys ("<<: *base")
        # come first in the mapping but sit on the anchor's lines, so not the next in order
        starts = [*sorted(set(key_lines)), close + 1]
        entries: list[Entry] = []
        issues: list[Issue] = []
        for i, (knode, vnode) in enumerate(node.value):
            first = key_lines[i]
            last = _trim_end(lines, first, starts[bisect.bisect_right(starts, first)] - 1)
            try:
                key, value = _construct(loader, knode, {}), _construct(loader, vnode, {})
            except RecursionError:
                issues.append(Issue(path, "malformed YAML frontmatter value: nested too"
                                    " deeply", first, fatal=False))
                continue
            except (yaml.YAMLError, ValueError, TypeError) as exc:
                reason = f"malformed YAML frontmatter value: {exc}".splitlines()[0]
                issues.append(Issue(path, reason, first, fatal=False))
                continue
            entries.append(Entry(str(key), value, Span(first, last), lines[first - 1].strip(),
                                 _item_spans(lines, vnode, first, last)))
        return tuple(entries), tuple(issues)
    finally:
        loader.dispose()


_TAG = "tag:yaml.org,2002:"
_STR, _BOOL, _NULL, _INT = _TAG + "str", _TAG + "bool", _TAG + "null", _TAG + "int"
_SEQ, _MAP, _MERGE = _TAG + "seq", _TAG + "map", _TAG + "merge"


def _construct(loader: yaml.SafeLoader, node: yaml.Node, memo: dict[int, object]) -> object:
    """Construct a value from a composed node, the common tags without PyYAML's machinery.

    Strings, booleans, nulls, decimal integers, lists and plain mappings are built here
    (SafeConstructor costs ~10 µs a key); anything else (dates, floats, merges, binary)
    goes to the loader. ``memo`` shares an aliased node's value, so "billion laughs"
    anchors stay linear and a recursive anchor becomes a cycle, not a crash.
    """
    tag = node.tag
    if tag == _STR:
        return node.value
    known = memo.get(id(node))
    if known is not None:
        return known
    if tag == _SEQ:
        items: list[object] = []
        memo[id(node)] = items
        items.extend(_construct(loader, child, memo) for child in node.value)
        return items
    if tag == _MAP and not any(k.tag == _MERGE for k, _ in node.value):
        mapping: dict[object, object] = {}
        memo[id(node)] = mapping
        for knode, vnode in node.value:
            key = _construct(loader, knode, memo)
            mapping[key if isinstance(key, str | int | float | bool) else str(key)] = \
                _construct(loader, vnode, memo)
        return mapping
    if tag == _BOOL:
        return loader.bool_values[node.value.lower()]
    if tag == _NULL:
        return None
    if tag == _INT and node.value.isdigit():
        return int(node.value)
    return loader.construct_object(node, deep=True)


def _item_spans(lines: Sequence[str], node: yaml.Node, first: int, last: int
                ) -> tuple[tuple[Span, str], ...]:
    """Each item's lines of a block list whose items start on lines of their own.

    Items must start in order inside the key's lines (``first``..``last``): an alias item
    (``- *x``) is the node it refers to, whose lines are elsewhere; then the key is cited.
    """
    if not isinstance(node, yaml.SequenceNode) or node.flow_style or not node.value:
        return ()
    starts = [child.start_mark.line + 2 for child in node.value]
    if not all(a < b for a, b in zip([first, *starts], [*starts, last + 1], strict=True)):
        return ()
    ends = [_trim_end(lines, a, b - 1) for a, b in zip(starts, starts[1:], strict=False)]
    ends.append(_trim_end(lines, starts[-1], last))
    return tuple((Span(a, b), lines[a - 1].strip()) for a, b in zip(starts, ends, strict=True))


def _trim_end(lines: Sequence[str], first: int, last: int) -> int:
    """Drop blank and comment lines that end a key's span (1-based, inclusive)."""
    while last > first:
        text = lines[last - 1].strip()
        if text and not text.startswith("#"):
            break
        last -= 1
    return last
