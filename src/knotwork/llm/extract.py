"""Model extraction over the store's live chunks: one call per chunk, cached, on a budget.

The chunk-level extractor of knotwork (the block extractors of ``ingest.extract`` run
inside every sync and need no model; this one runs only when asked, ``knotwork
extract``). For each live file document of a scope:

1. every live chunk with something to say is looked up in the ``ExtractionCache``
   (chunk text + model + prompt version); only the misses are sent, ``concurrency`` at
   a time;
2. a call is sent only while its worst case fits the token budget: the prompt's tokens
   × 1.2 plus the completion cap; what it really cost (``usage``) is then counted;
3. each answer is cached the moment it arrives, so a run stopped by the budget, an
   error or Ctrl-C resumes where it was, paying nothing twice;
4. a document whose every chunk has an answer gets its triples grounded
   (``triples.ground``) and written as its ``llm`` facts (``apply_extracted``): trust
   ``extracted``, review ``unreviewed``, owned by the document, so an edit retracts the
   facts of the chunks it changed and the next run sends only those chunks again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from ..errors import BackendUnavailable, InvalidQuery
from ..ingest.lexicon import normalize_relation
from ..store import Store
from ..types import FactDraft, LiteralValue, NameRef, Span
from .cache import CachedAnswer, ExtractionCache, chunk_key
from .client import ChatClient
from .triples import (
    PROMPT_VERSION,
    SCHEMA,
    Grounded,
    Triple,
    ground,
    messages,
    parse_triples,
)

__all__ = ["EXTRACTOR", "ExtractReport", "run_extraction"]

#: The ``extractor`` of every model-extracted fact (the store's third owner of a document).
EXTRACTOR = "llm"
CONFIDENCE = 0.7  # below what structure states (1.0) and what a sentence implies (0.8)
_MIN_LETTERS = 12  # a chunk with fewer letters (a lone heading) is not worth a call
_APPLY_BATCH = 100  # documents written per transaction
_SUPPORT_CHARS = 300

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class ExtractReport:
    """What one extraction run did and what it cost."""

    model: str
    documents: int = 0  # live file documents looked at
    documents_applied: int = 0  # whose every chunk had an answer: facts written
    documents_pending: int = 0  # waiting for answers a later run gets (budget, error)
    chunks: int = 0  # chunks worth a call
    chunks_skipped: int = 0  # too little text to ask about
    cached: int = 0  # chunks answered from the cache
    sent: int = 0  # chunks answered by the model in this run
    calls: int = 0  # HTTP requests, retries included
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    budget: int | None = None
    stopped: str | None = None  # None (done), "budget", "error" or "interrupted"
    error: str | None = None
    triples: int = 0  # triples the answers held
    facts_added: int = 0
    facts_retracted: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> triples dropped
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, object]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["total_tokens"] = self.total_tokens
        out["dropped"] = dict(sorted(self.dropped.items()))
        return out


@dataclass(frozen=True, slots=True)
class _Doc:
    id: int
    path: str
    chunks: tuple[tuple[int, str, str], ...]  # (first line, text, cache key) worth a call
    live: tuple[tuple[int, str], ...]  # every live chunk as read: (first line, text)


def run_extraction(store: Store, client: ChatClient, cache: ExtractionCache, *, scope: str,
                   actor: str, prefix: str = "", budget: int | None = None,
                   count_tokens: Callable[[str], int], progress: Progress | None = None
                   ) -> ExtractReport:
    """Extract facts from the live notes of ``scope`` under the vault path ``prefix``
    ("" = all), spending at most ``budget`` tokens (None = no limit)."""
    if budget is not None and budget < 1:
        raise InvalidQuery(f"budget must be 1 token or more, got {budget}")
    started = time.perf_counter()
    model = client.config.model
    report = ExtractReport(model=model, budget=budget)
    docs = _documents(store, scope, prefix, model, report)
    answers = cache.get_many(k for d in docs for _, _, k in d.chunks)
    report.cached = sum(1 for d in docs for _, _, k in d.chunks if k in answers)
    todo = {k: text for d in docs for _, text, k in d.chunks if k not in answers}
    before = client.usage.as_dict()
    dropped: Counter[str] = Counter()
    _send(client, cache, todo, answers, report, dropped, budget=budget,
          count_tokens=count_tokens, progress=progress)
    after = client.usage.as_dict()
    report.calls = after["calls"] - before["calls"]
    report.retries = after["retries"] - before["retries"]
    report.prompt_tokens = after["prompt_tokens"] - before["prompt_tokens"]
    report.completion_tokens = after["completion_tokens"] - before["completion_tokens"]
    _apply(store, docs, answers, report, dropped, actor=actor)
    report.dropped = dict(dropped)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _documents(store: Store, scope: str, prefix: str, model: str,
               report: ExtractReport) -> list[_Doc]:
    reader = store.reader
    prefix = prefix.strip("/")
    paths = sorted(p for p in reader.document_index(scope)
                   if not prefix or p == prefix or p.startswith(prefix + "/"))
    ids = reader.live_document_ids(scope, paths)
    inputs = reader.mention_inputs_of(list(ids.values()))
    docs = []
    for path in paths:
        if path not in ids:
            continue
        chunks = []
        for line, text in inputs[ids[path]].chunks:
            if sum(c.isalpha() for c in text) < _MIN_LETTERS:
                report.chunks_skipped += 1
                continue
            chunks.append((line, text, chunk_key(model, PROMPT_VERSION, text)))
        docs.append(_Doc(ids[path], path, tuple(chunks), tuple(inputs[ids[path]].chunks)))
    report.documents = len(docs)
    report.chunks = sum(len(d.chunks) for d in docs)
    return docs


def _send(client: ChatClient, cache: ExtractionCache, todo: dict[str, str],
          answers: dict[str, CachedAnswer], report: ExtractReport, dropped: Counter[str], *,
          budget: int | None, count_tokens: Callable[[str], int],
          progress: Progress | None) -> None:
    """Ask the model about each chunk of ``todo`` within the budget, caching each answer.

    Ctrl-C stops sending; the calls in flight are paid for, so their answers are awaited
    and kept (``stopped: "interrupted"``).
    """
    cap = client.config.max_tokens
    fixed = count_tokens(messages("")[0]["content"]) + 24  # system prompt and framing

    def worst(text: str) -> int:
        return int((fixed + count_tokens(text)) * 1.2) + cap

    queue: Iterator[tuple[str, str, int]] = ((k, t, 0) for k, t in todo.items())
    retry: list[tuple[str, str, int]] = []
    inflight: dict[Future[_Reply], tuple[str, str, int, int]] = {}
    state = {"spent": 0, "reserved": 0, "done": 0}
    total = len(todo)
    if progress and total:
        progress(0, total)

    def take(fut: Future[_Reply]) -> None:
        key, text, attempt, need = inflight.pop(fut)
        state["reserved"] -= need
        try:
            pt, ct, triples, refused = fut.result()
        except BackendUnavailable as exc:
            if report.stopped != "error":
                report.stopped, report.error = "error", str(exc)
            return
        state["spent"] += pt + ct
        if triples is None and attempt == 0 and report.stopped is None:
            retry.append((key, text, 1))  # no JSON at all: ask once more
            return
        dropped.update(refused)
        if triples is None:
            dropped["unparseable answer"] += 1
        answer = CachedAnswer(tuple(triples or ()),
                              "ok" if triples is not None else "unparseable", pt, ct)
        cache.put(key, answer, model=client.config.model, prompt_version=PROMPT_VERSION)
        answers[key] = answer
        report.sent += 1
        state["done"] += 1
        if progress:
            progress(state["done"], total)

    with ThreadPoolExecutor(max_workers=client.config.concurrency,
                            thread_name_prefix="knotwork-llm") as pool:
        try:
            while True:
                while report.stopped is None and len(inflight) < client.config.concurrency:
                    item = retry.pop() if retry else next(queue, None)
                    if item is None:
                        break
                    key, text, attempt = item
                    need = worst(text)
                    if budget is not None and (
                            state["spent"] + state["reserved"] + need > budget):
                        if inflight:  # what those cost may leave room: wait and see
                            retry.append(item)
                        else:
                            report.stopped = "budget"
                        break
                    state["reserved"] += need
                    inflight[pool.submit(_ask, client, text)] = (key, text, attempt, need)
                if not inflight:
                    break
                finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in finished:
                    take(fut)
        except KeyboardInterrupt:
            report.stopped = "interrupted"
            for fut in list(inflight):
                take(fut)


_Reply = tuple[int, int, list[Triple] | None, Counter[str]]


def _ask(client: ChatClient, text: str) -> _Reply:
    result = client.chat(messages(text), schema=SCHEMA)
    parsed = parse_triples(result.content)
    if parsed is None:
        return result.prompt_tokens, result.completion_tokens, None, Counter()
    return result.prompt_tokens, result.completion_tokens, parsed[0], parsed[1]


def _apply(store: Store, docs: Sequence[_Doc], answers: dict[str, CachedAnswer],
           report: ExtractReport, dropped: Counter[str], *, actor: str) -> None:
    """Write the grounded facts of every document whose chunks all have an answer."""
    ready: list[tuple[_Doc, list[FactDraft]]] = []
    for d in docs:
        if any(k not in answers for _, _, k in d.chunks):
            report.documents_pending += 1
            continue
        drafts: list[FactDraft] = []
        for line, text, key in d.chunks:
            triples = list(answers[key].triples)
            report.triples += len(triples)
            drafts.extend(_drafts(ground(triples, text, dropped=dropped), line, dropped))
        ready.append((d, drafts))
    for i in range(0, len(ready), _APPLY_BATCH):
        batch = ready[i:i + _APPLY_BATCH]
        with store.write(actor=actor) as w:
            # A note edited since its chunks were read (a watcher, another sync) waits for
            # the next run: its drafts cite lines of the text the model saw. Read under the
            # write lock, so no writer can change them before these facts are written.
            now = store.reader.mention_inputs_of([d.id for d, _ in batch])
            for d, drafts in batch:
                if d.id not in now or tuple(now[d.id].chunks) != d.live:
                    report.documents_pending += 1
                    continue
                added, retracted = w.apply_extracted(d.id, drafts)
                report.facts_added += added
                report.facts_retracted += retracted
                report.documents_applied += 1


def _drafts(grounded: Sequence[Grounded], first_line: int, dropped: Counter[str]
            ) -> Iterator[FactDraft]:
    for g in grounded:
        t = g.triple
        predicate = normalize_relation(t.predicate)
        if not predicate:
            dropped["bad predicate"] += 1
            continue
        obj: NameRef | LiteralValue = (LiteralValue(t.object) if t.kind == "value"
                                       else NameRef.of(t.object))
        line = first_line + g.line
        yield FactDraft(subject=NameRef.of(t.subject), predicate=predicate, object=obj,
                        span=Span(line, line), supporting_text=g.text[:_SUPPORT_CHARS],
                        extractor=EXTRACTOR, extractor_version=PROMPT_VERSION,
                        confidence=CONFIDENCE, trust="extracted")
