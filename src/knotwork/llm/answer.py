"""Cited answers: the grounded prompt, and every citation checked against the notes.

The model sees only the context bundle ``Knotwork.context`` cut to a budget, and is told
to answer from it alone, to cite each claim as ``[path:line]`` (the form the bundle's
facts and evidence are cited in) and, when the context does not answer, to reply with
``REFUSAL`` and nothing else. An empty context is refused without a call.

``verify`` reads every ``[path:line]`` / ``[path:a-b]`` in an answer and checks it
against the store's current text: a document that does not exist, a line past its end,
or words the answer quotes ("…") next to the citation that the cited lines do not hold
are flagged. A citation is a claim about a file, so it is checked against the file as it
is now, not against the context the model was shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["ASK_PROMPT", "REFUSAL", "Answer", "Citation", "ask_messages", "is_refusal",
           "verify"]

REFUSAL = "I cannot answer that from the notes."

ASK_PROMPT = (
    "You answer questions about a person's notes, using ONLY the context below (facts and"
    " passages taken from the notes). Rules:\n"
    "1. Use nothing but the context: no outside knowledge, no guesses.\n"
    "2. After every claim, cite where it comes from as [path:line] or [path:start-end],"
    " copying the path and line numbers exactly as the context shows them, e.g."
    " [services/Traefik.md:7].\n"
    "3. When you quote words, put them in double quotes, exactly as the note writes them.\n"
    f"4. If the context does not answer the question, reply exactly: {REFUSAL}\n"
    "5. Be brief."
)

# "[notes/a b.md:12]", "[a.md:3-5]", "[a.md:3; b.md:9-10]": a path with an extension
_BRACKET = re.compile(r"\[([^\[\]\n]{1,400}?\.[A-Za-z0-9]{1,8}:\d+(?:\s*[-–]\s*\d+)?"
                      r"(?:\s*[;,]\s*[^\[\]\n]{1,400}?\.[A-Za-z0-9]{1,8}:\d+"
                      r"(?:\s*[-–]\s*\d+)?)*)\]")
_ONE = re.compile(r"\s*(?P<path>.+?\.[A-Za-z0-9]{1,8}):(?P<a>\d+)(?:\s*[-–]\s*(?P<b>\d+))?\s*\Z")
_QUOTE = re.compile(r"[\"“]([^\"“”\n]{2,300})[\"”]")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def ask_messages(question: str, context: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": ASK_PROMPT},
            {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"}]


def is_refusal(answer: str) -> bool:
    """Whether the answer is the refusal (alone, give or take blanks and quotes)."""
    return answer.strip().strip("\"'").strip() == REFUSAL or (
        REFUSAL in answer and len(answer.strip()) < len(REFUSAL) + 40)


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation of an answer and what checking it found (``problem`` None: it holds)."""

    text: str  # as written, without brackets
    path: str
    line_start: int
    line_end: int
    quoted: tuple[str, ...]  # words the answer quotes right before it
    problem: str | None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text, "path": self.path, "line_start": self.line_start,
                "line_end": self.line_end, "quoted": list(self.quoted), "ok": self.ok,
                "problem": self.problem}


@dataclass(frozen=True, slots=True)
class Answer:
    """What ``Knotwork.ask`` answers."""

    question: str
    answer: str
    refused: bool
    citations: tuple[Citation, ...]
    model: str | None  # None: no call was made (the context was empty)
    context_tokens: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def flagged(self) -> int:
        return sum(1 for c in self.citations if not c.ok)

    @property
    def uncited(self) -> bool:
        """An answer that is no refusal and cites nothing."""
        return not self.refused and not self.citations

    def as_dict(self) -> dict[str, object]:
        return {"question": self.question, "answer": self.answer, "refused": self.refused,
                "citations": [c.as_dict() for c in self.citations], "flagged": self.flagged,
                "uncited": self.uncited, "model": self.model,
                "context_tokens": self.context_tokens, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


def _norm(text: str) -> str:
    return " ".join(text.casefold().replace("’", "'").split())


def verify(answer: str, texts: Callable[[list[str]], Mapping[str, str]]) -> list[Citation]:
    """Check every citation of ``answer``; ``texts(paths)`` gives each existing
    document's current text (a path missing from it does not exist)."""
    found: list[tuple[str, str, int, int, tuple[str, ...]]] = []
    last = 0
    for m in _BRACKET.finditer(answer):
        # the words quoted in the sentence before this citation (after the last one)
        start = last
        for end in _SENTENCE_END.finditer(answer, last, m.start()):
            if end.end() < m.start():
                start = end.end()
        quoted = tuple(q.group(1) for q in _QUOTE.finditer(answer, start, m.start()))
        last = m.end()
        for part in re.split(r"\s*[;,]\s*(?=[^;,]*\.[A-Za-z0-9]{1,8}:\d)", m.group(1)):
            one = _ONE.match(part)
            if one is None:
                continue
            a = int(one["a"])
            b = int(one["b"]) if one["b"] else a
            found.append((part.strip(), one["path"].strip(), a, b, quoted))
    if not found:
        return []
    docs = texts(sorted({f[1] for f in found}))
    out = []
    for text, path, a, b, quoted in found:
        out.append(Citation(text, path, a, b, quoted, _problem(docs.get(path), a, b, quoted)))
    return out


def _problem(doc: str | None, a: int, b: int, quoted: tuple[str, ...]) -> str | None:
    if doc is None:
        return "no such document"
    lines = doc.split("\n")
    if a < 1 or b < a:
        return f"line range {a}-{b} is not valid"
    if b > len(lines):
        return f"line {b} is past the end (the document has {len(lines)} lines)"
    held = _norm("\n".join(lines[a - 1:b]))
    missing = [q for q in quoted if _norm(q) not in held]
    if missing:
        return f"the cited lines do not hold the quoted words {missing[0]!r}"
    return None
