"""The assembled context as prompt-ready Markdown, each item under a line citing its source.

The text is a heading, then one block per item::

    # Context: how do we deploy heliograph

    ### services/Heliograph.md:12-20 · notes · score 0.82
    Heliograph deploys with …

Each block starts a line with ``#``, where no o200k/cl100k token spans the line break
before it (``retrieve.budget.segments``), so the tokens of the whole text are exactly the
heading's plus each block's: an item's ``tokens`` is its block's, and the budget can cost
an item alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Ranked


def heading(query: str) -> str:
    # one line, whatever the question holds: a newline in it would start a block
    return f"# Context: {' '.join(query.split())}\n\n"


def block(r: Ranked) -> str:
    """One item: the line citing it, its text, a blank line."""
    marks = "".join((" · pinned" if r.item.pinned else "", " · cut" if r.cut else ""))
    cite = " ".join(r.item.source.split()) or "(no source)"
    return (f"### {cite} · {r.tier} · score {r.item.score:.2f}{marks}\n"
            f"{r.item.content.strip()}\n\n")


def render_markdown(query: str, results: Iterable[Ranked]) -> str:
    """The whole text: ``heading`` and the ``block`` of every result, in order."""
    return heading(query) + "".join(block(r) for r in results)
