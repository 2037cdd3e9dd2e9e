"""What ``knotwork check`` judges the same way on every backend: whether a live fact's
citation holds against its version's text, and how a check's problems are listed.

Each backend reads its own rows (``store/<backend>/integrity.py``) and hands them here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from .records import Problem

MAX_LISTED = 20  # problems of one kind listed one by one; the rest are counted

# (fact id, version id, line_start, line_end, supporting_text, document id, the version's
# document id or None when no such version exists), ordered by version id
CitationRow = tuple[int, int | None, int | None, int | None, str | None, int | None,
                    int | None]


def capped(check: str, details: Iterator[str]) -> list[Problem]:
    """The first ``MAX_LISTED`` details as problems of ``check``, then a count of the rest."""
    out: list[Problem] = []
    extra = 0
    for d in details:
        if len(out) < MAX_LISTED:
            out.append(Problem(check, d))
        else:
            extra += 1
    if extra:
        out.append(Problem(check, f"… and {extra} more"))
    return out


def citation_problems(rows: Iterable[CitationRow], version_text: Callable[[int], str]
                      ) -> Iterator[str]:
    """Each live fact read from a document cites lines of its version, holding its text;
    ``version_text`` reads a version's text (once per version: ``rows`` come by version)."""
    current: int | None = None
    lines: list[str] = []
    for fid, vid, start, end, supporting, doc, vdoc in rows:
        if vid is None:
            continue  # a fact no version backs (an agent's assertion about a document)
        if vdoc is None:
            yield f"fact #{fid} cites version {vid}, which does not exist"
            continue
        if vdoc != doc:
            yield f"fact #{fid} of document {doc} cites version {vid} of document {vdoc}"
            continue
        if vid != current:
            lines, current = _lines(version_text(vid)), vid
        if start is None:
            continue
        if not (1 <= start <= (end or start) <= max(len(lines), 1)):
            yield (f"fact #{fid} cites lines {start}-{end} of version {vid}, which has"
                   f" {len(lines)}")
            continue
        if supporting and not _holds(lines[start - 1:(end or start)], supporting):
            yield f"fact #{fid}: its supporting text is not in lines {start}-{end}"


def _lines(text: str) -> list[str]:
    """A version's lines as the parser numbers them: split on "\n" only (a lone "\r" ends
    no line; a CRLF's "\r" is dropped)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _holds(lines: list[str], supporting: str) -> bool:
    """Whether the cited lines hold the supporting text, blanks aside (a sentence cited
    across wrapped lines is one line of text; a long one is cut around '…')."""
    cited = _squash(" ".join(lines))
    return all(_squash(part) in cited for part in supporting.split("…") if part.strip())
