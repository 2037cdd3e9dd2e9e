"""Documents of plain chunks for vector tests: each chunk's text names its note."""

from __future__ import annotations

import hashlib

from knotwork.types import ChunkDraft, ParsedDocument, Span


def chunk_note(name: str, chunks: int) -> ParsedDocument:
    """A note ``<name>.md`` of ``chunks`` one-line chunks and no facts."""
    drafts = tuple(ChunkDraft(j, (), f"{name} chunk {j}", Span(j + 1, j + 1))
                   for j in range(chunks))
    text = "\n".join(c.text for c in drafts)
    return ParsedDocument(path=f"{name}.md", text=text,
                          content_hash=hashlib.sha256(text.encode()).hexdigest(), title=name,
                          doc_type="note", names=(), chunks=drafts, facts=())
