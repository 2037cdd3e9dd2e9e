"""Documents, facts and links built by hand: the store contract does not depend on the
parser, so a backend is tested on exactly the records it is given."""

from __future__ import annotations

import hashlib

from knotwork.types import (
    SELF,
    ChunkDraft,
    FactDraft,
    LiteralValue,
    NameDecl,
    NameRef,
    ObjectRef,
    ParsedDocument,
    Span,
    name_key,
)


def fact(pred: str, obj: ObjectRef, line: int, *, subject=SELF, conf: float = 1.0,  # type: ignore[no-untyped-def]
         text: str = "") -> FactDraft:
    return FactDraft(subject=subject, predicate=pred, object=obj, span=Span(line, line),
                     supporting_text=text or f"{pred} line {line}", extractor="test",
                     confidence=conf)


def doc(path: str, facts: list[FactDraft], *, body: str = "", title: str | None = None,
        aliases: tuple[str, ...] = ()) -> ParsedDocument:
    """A parsed document built by hand: the store contract does not depend on the parser."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    title = title or stem
    text = body or "\n".join(f"line {i}" for i in range(1, 11))
    names = [NameDecl(name_key(path), path.removesuffix(".md"), "path"),
             NameDecl(name_key(stem), stem, "stem")]
    if title != stem:
        names.append(NameDecl(name_key(title), title, "title"))
    names += [NameDecl(name_key(a), a, "alias") for a in aliases]
    seen: set[str] = set()
    uniq = [n for n in names if not (n.key in seen or seen.add(n.key))]  # type: ignore[func-returns-value]
    lines = text.split("\n")
    chunks = (ChunkDraft(0, (title,), "\n".join(lines), Span(1, len(lines))),)
    digest = hashlib.sha256((text + repr(facts) + repr(aliases)).encode()).hexdigest()
    return ParsedDocument(path=path, text=text, content_hash=digest, title=title,
                          doc_type="note", names=tuple(uniq), chunks=chunks, facts=tuple(facts))


def link(target: str) -> NameRef:
    return NameRef.of(target)


def lit(value: str, datatype: str = "string") -> LiteralValue:
    return LiteralValue(value, datatype)
