"""The Knotwork facade: the composition root every front end calls.

It is the only reader of ``Settings``; below it, every layer takes explicit arguments.

    >>> from knotwork import Knotwork
    >>> with Knotwork.open("examples/vault") as kw:      # doctest: +SKIP
    ...     kw.ingest()
    ...     print(kw.render(kw.context("traefik"), "markdown"))
"""

from __future__ import annotations

import functools
import getpass
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from .config import Settings
from .embed import Embedder, manifest, open_embedder
from .errors import ConfigError, Conflict, InvalidQuery, NotFound
from .render import renderer
from .retrieve import ContextOptions, Measure, build_context, fulltext, token_counter
from .retrieve.memo import ReadMemo
from .retrieve.pipeline import says_something
from .retrieve.rank import HYBRID_WEIGHTS, bm25_moments, zscore_sum
from .retrieve.rank import fusion as fusion_by_name
from .store import Store, StoreReader, open_store, record_time
from .types import (
    Applied,
    EntityView,
    FactDraft,
    FactRow,
    KnowledgeContext,
    LiteralValue,
    NameRef,
    SearchHit,
    Span,
    SyncReport,
    name_key,
)

if TYPE_CHECKING:  # imported where used: a process that only queries never loads them
    import numpy as np
    import numpy.typing as npt

    from .ingest.mentions import MentionFinder
    from .retrieve.vectors import VectorIndex
    from .sync import files as _sync
    from .sync.watch import VaultWatcher

    FloatArray = npt.NDArray[np.float32]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _float32(vectors: object) -> FloatArray:
    """An embedder's output as a float32 array (numpy loads with the first vectors: a
    process that never reads one, ``knotwork facts`` say, skips its import)."""
    import numpy as np

    return np.asarray(vectors, dtype=np.float32)


def _one_state(method: Callable[Concatenate[Knotwork, _P], _R]
               ) -> Callable[Concatenate[Knotwork, _P], _R]:
    """Run a read method inside ``Store.snapshot``: every read it makes sees one state."""

    @functools.wraps(method)
    def run(self: Knotwork, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.store.snapshot():
            return method(self, *args, **kwargs)

    return run


class Knotwork:
    """A context graph over one store (and, optionally, one vault folder)."""

    def __init__(self, store: Store, settings: Settings, *, vault: Path | None = None) -> None:
        self.store = store
        self.settings = settings
        self.vault = vault
        self.actor = settings.actor or f"cli:{_user()}"
        self._embedder: Embedder | None = None
        self._vindex: VectorIndex | None = None
        self._finder: MentionFinder | None = None  # see ``_mentions``
        self._memo = ReadMemo()  # term counts and degrees, dropped at every commit
        self._ontology: dict[str, dict[str, str]] = {}
        if settings.ontology:
            from .sync.agent import load_ontology

            self._ontology = load_ontology(settings.ontology)

    @property
    def _mentions(self) -> MentionFinder:
        """This process's label table, kept current by sync (loaded by the first write)."""
        if self._finder is None:
            from .ingest.mentions import MentionFinder

            self._finder = MentionFinder()
        return self._finder

    @classmethod
    def open(cls, vault: str | os.PathLike[str] | None = None, *, db: str | None = None,
             settings: Settings | None = None, **overrides: Any) -> Knotwork:
        """Open the store for ``vault`` (default ``<vault>/.knotwork/store.db``) or ``db``."""
        base = Path(vault).expanduser().resolve() if vault is not None else None
        if db is None and settings is None and base is not None and "KNOTWORK_DB" not in os.environ:
            db = str(base / ".knotwork" / "store.db")
        s = settings or Settings.from_env(**overrides)
        if db is not None:
            s = replace(s, db=db)
        _globs(s.patterns.split(","))  # a setting that names no file fails here, not later
        return cls(open_store(s.db, synchronous=s.synchronous), s, vault=base)

    def close(self) -> None:
        if self._vindex is not None:
            self._vindex.close()  # stops a graph build, saves the graph if it lags
        self.store.close()

    def __enter__(self) -> Knotwork:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------ ingest

    def ingest(self, path: str | os.PathLike[str] | None = None, *, scope: str | None = None,
               patterns: Sequence[str] | None = None, force: bool = False,
               dry_run: bool = False, progress: _sync.Progress | None = None,
               only: Sequence[str] | None = None, embed: bool = True,
               embed_progress: _sync.Progress | None = None, replace: bool = False,
               mention_progress: _sync.Progress | None = None) -> SyncReport:
        """Bring the store in step with a folder: only what changed is applied.

        ``path``: the folder (default the vault), or one note file in the vault, applied
        alone and named by its path in the vault (this object's, else the folder the
        scope's last full sync read). ``only`` limits the work to those vault-relative
        paths (what a watcher saw change); a path that no longer exists is deleted, a
        vanished path whose content reappears under a new path is a rename. ``patterns``:
        the globs of the files read as notes (default ``Settings.patterns``); a note the
        globs no longer cover is deleted. A scope holds one vault: a sync of another
        folder that would delete notes of the scope's vault, while that vault still
        exists, is refused unless ``replace`` (a vault that moved, or a copy, is followed).
        Each ``*progress`` is told (done, total): ``progress`` of the files applied,
        ``mention_progress`` of the documents scanned for names afterwards,
        ``embed_progress`` of the chunks embedded.
        """
        root = Path(path).expanduser() if path is not None else self.vault
        if root is None:
            raise InvalidQuery("no folder to ingest: pass a path or open a vault")
        from .sync import files as _sync

        s = self.settings
        globs = self.patterns(patterns)
        # a file path that no longer exists (a folder path has no suffix: "not a folder")
        gone = not root.exists() and bool(root.suffix) and root.parent.is_dir()
        if root.is_file() or gone:
            if only is not None:
                raise InvalidQuery("give a folder with `only`, not a file")
            root, rel = self._note_root(root, scope or s.scope, globs, gone=gone)
            only = [rel]
        report = _sync.sync(self.store, root, scope=scope or s.scope, actor=self.actor,
                            finder=self._mentions,
                            patterns=globs, force=force, dry_run=dry_run,
                            max_bytes=s.max_file_bytes, chunk_tokens=s.chunk_tokens,
                            workers=s.workers, progress=progress, only=only, replace=replace,
                            mention_progress=mention_progress)
        if embed and not dry_run and self.embedder() is not None:
            self.embed(progress=embed_progress)
        return report

    def _note_root(self, file: Path, scope: str, patterns: tuple[str, ...], *,
                   gone: bool = False) -> tuple[Path, str]:
        """The vault holding ``file`` and the file's path in it.

        The vault is this object's, else the folder the scope's last full sync read: a
        note is named by its path in its vault, so one file synced alone is the same
        document as when its folder is synced. A ``gone`` file is one the store still
        holds: syncing it alone deletes it, as a sync of its folder would.
        """
        from .ingest.sources import VaultRules
        from .sync import files as _sync

        full = file.parent.resolve() / file.name  # a symlinked note keeps its own name
        known = self.store.reader.meta(_sync.root_key(scope))
        roots = [r for r in (self.vault, Path(known) if known else None) if r is not None]
        for root in roots:
            if full.is_relative_to(root):
                rel = full.relative_to(root).as_posix()
                if gone:
                    held = self.store.reader.document(scope, rel)
                    if held is None or held.deleted_at is not None:
                        raise InvalidQuery(f"{file} does not exist, and the store holds no"
                                           " note at that path")
                    return root, rel
                if VaultRules(root, patterns=patterns).file(rel) is None:
                    raise InvalidQuery(f"{file} is not a note: the patterns"
                                       f" ({', '.join(patterns)}) or the vault's ignore rules"
                                       " leave it out")
                return root, rel
        where = " or ".join(str(r) for r in roots) or "no folder synced yet"
        raise InvalidQuery(f"{file} is not inside the vault of scope {scope!r} ({where}):"
                           " ingest the folder that holds it first")

    def patterns(self, given: Sequence[str] | None = None) -> tuple[str, ...]:
        """The globs of the vault's notes: ``given``, else ``Settings.patterns``."""
        return _globs(list(given) if given else self.settings.patterns.split(","))

    # ------------------------------------------------------------ vectors

    def embedder(self) -> Embedder | None:
        """The configured embedder (loaded on first use), or None when switched off."""
        if self._embedding_off():
            return None
        if self._embedder is None:
            self._embedder = open_embedder(self.settings.embedder)
        return self._embedder

    def _check_manifest(self, emb: Embedder) -> None:
        """Refuse to mix vectors of two models in one store."""
        stored = self.store.reader.meta("embedder")
        # any stored vector at all (one indexed read): this runs before every vector query
        if not stored or not self.store.reader.has_vectors():
            return
        have = json.loads(stored)
        want: dict[str, Any] = {"name": emb.name, "version": emb.version}
        if (have["name"], have["version"]) == (emb.name, emb.version):
            # the same model served differently (an OpenAI-compatible server's model at
            # another size, a resized test embedder): vectors of another dimension would
            # never match a query, silently. Read only now: an unknown dim costs a request.
            want = asdict(manifest(emb))
            if all(have.get(k, want[k]) == want[k] for k in ("dim", "normalized")):
                return
        raise ConfigError(
            f"this store's vectors were made by {_described(have)}, but the configured"
            f" embedder is {_described(want)}", key="embedder",
            hint="run `knotwork reindex --embeddings` to re-embed with the new model, or"
                 f" set KNOTWORK_EMBEDDER={have['name']}")

    def embed(self, *, progress: _sync.Progress | None = None, batch: int = 64,
              window: int = 1024) -> dict[str, object]:
        """Embed every live chunk that has no vector yet (each distinct text once).

        Pending chunks are read ``window`` at a time and embedded ``batch`` at a time,
        shortest first: the model pads each of its batches to its longest text, and
        neighbours in length out of a thousand pad far less than out of 64 (SciFact's
        end-to-end throughput, bench/README.md). Each ``batch`` is written and reported as
        it is done.
        """
        emb = self.embedder()
        if emb is None:
            return {"embedded": 0, "tokens": 0, "seconds": 0.0, "embedder": None}
        self._check_manifest(emb)
        reader = self.store.reader
        done_before, live = reader.vector_counts()
        started, done = time.perf_counter(), 0
        # tokens embedded, for the statistics: counted by the embedder as it embeds (MiniLM)
        counted_before = getattr(emb, "tokens_embedded", 0)
        stamp = json.dumps(asdict(manifest(emb)))
        while pending := reader.pending_chunks(window):
            pending.sort(key=lambda item: len(item[1]))  # characters: tokens' stand-in
            for i in range(0, len(pending), batch):
                items = pending[i:i + batch]
                vecs = _float32(emb.embed([t for _, t in items]))
                with self.store.write(actor=self.actor) as w:
                    w.set_meta("embedder", stamp)
                    w.put_vectors([(h, vecs[j].tobytes()) for j, (h, _) in enumerate(items)])
                done += len(items)
                if progress:
                    progress(done_before + done, live)
        tokens = getattr(emb, "tokens_embedded", 0) - counted_before
        # past ann_threshold, leave a graph the next search can load (built here if need be)
        self.vector_index(emb.dim).prepare(reader, vectors=done_before + done)
        return {"embedded": done, "tokens": tokens, "embedder": emb.name,
                "seconds": round(time.perf_counter() - started, 3)}

    def reindex_embeddings(self, *, progress: _sync.Progress | None = None
                           ) -> dict[str, object]:
        """Drop every vector and embed again with the configured model."""
        if self.embedder() is None:
            raise ConfigError("no embedder configured", key="embedder",
                              hint="set KNOTWORK_EMBEDDER=minilm")
        with self.store.write(actor=self.actor) as w:
            w.clear_vectors()
        return self.embed(progress=progress)

    def compact(self, *, vacuum: bool = False) -> dict[str, int]:
        """Give back the room that history takes: drop the chunks of past versions that
        no fact cites, and store past versions' text compressed. Facts, versions, live
        chunks and every cited chunk stay, so no answer, history or citation changes.
        ``vacuum`` also rewrites the file to its used pages, which returns the packed
        text's room (a copy of the whole store: writers wait for it, readers go on)."""
        return self.store.compact(actor=self.actor, vacuum=vacuum)

    def _embedding_off(self) -> bool:
        return self.settings.embedder.strip().lower() in ("", "none", "off")

    def embedding_status(self) -> str:
        """``complete`` | ``partial n/m`` | ``none``: what semantic search can see.

        Told from the settings and the store alone: loading the embedder (its backend and
        numpy) to learn that a store holds no vector cost every query of one ~0.1 s.
        """
        if self._embedding_off():
            return "none"
        has, pending = self.store.reader.vector_status()
        if not has:
            return "none"
        if not pending:
            return "complete"
        done, live = self.store.reader.vector_counts()
        return f"partial {done}/{live}"

    @staticmethod
    def _embed_query(emb: Embedder, query: str) -> FloatArray:
        return _float32(emb.embed([query]))[0]

    def _early_query_vector(self, query: str) -> Callable[[], FloatArray | None]:
        """Start embedding ``query`` now, in a thread; the returned call waits for it.

        Why: the model (onnxruntime) and SQLite both release the GIL, so the query's
        encoding runs while full-text search does, instead of after it. A short-lived
        thread, not a pool: an idle pool thread would keep ``sync`` from forking workers.
        """
        emb = self.embedder()
        if emb is None:
            return lambda: None
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["vec"] = self._embed_query(emb, query)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=run, name="knotwork-query-embed", daemon=True)
        worker.start()

        def wait() -> FloatArray | None:
            worker.join()
            if "error" in box:
                raise box["error"]
            return box.get("vec")

        return wait

    def _vector_search(self, query: str, k: int, *, stats: bool = True,
                       vec: FloatArray | None = None
                       ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
        emb = self.embedder()
        if emb is None:
            return [], None
        self._check_manifest(emb)
        index = self.vector_index(emb.dim)
        index.refresh(self.store.reader)
        if not len(index):
            return [], None
        if vec is None:
            vec = self._embed_query(emb, query)
        if not stats:
            return index.search(vec, k), None
        return index.search_with_stats(vec, k)

    def vector_index(self, dim: int) -> VectorIndex:
        """This process's vector index (exact; HNSW past ``ann_threshold`` vectors).

        The graph is saved beside the store as ``<store>.usearch`` and the float32 copy of
        the vectors as ``<store>.vectors`` (never in the vault, unless the store itself is
        there), so a new process (every CLI call) skips reading every vector from SQLite;
        an in-memory store keeps both in memory only.
        """
        from .retrieve.vectors import VectorIndex  # numpy: only once vectors are read

        if self._vindex is None or self._vindex.dim != dim:
            if self._vindex is not None:  # another model's vectors: its graph is of no use
                self._vindex.close()
            path = self.store.path
            disk = path != ":memory:"
            self._vindex = VectorIndex(dim, ann_threshold=self.settings.ann_threshold,
                                       ann_path=Path(path + ".usearch") if disk else None,
                                       mirror_path=Path(path + ".vectors") if disk else None)
        return self._vindex

    def _reader(self) -> StoreReader:
        """The store's reader, with counts that repeat across queries remembered."""
        return self._memo.reader(self.store.reader, self.store.change_token())

    def _chunk_count(self) -> int:
        """Live chunks (the store keeps the count: O(1))."""
        return self.store.reader.live_chunk_count()

    def ingest_document(self, doc_id: str, title: str, source: str, raw_content: str, *,
                        entities: Sequence[Mapping[str, Any]] = (),
                        relations: Sequence[Mapping[str, Any]] = (),
                        scope: str | None = None, min_confidence: float | None = None
                        ) -> dict[str, object]:
        """Store an agent's document with the entities and relations it extracted.

        Re-sending a ``doc_id`` follows the ownership rule: facts the new payload no longer
        states are retracted. Dropped entities and relations come back with their reasons.
        """
        from .sync import files as _sync
        from .sync.agent import build_agent_document

        s = self.settings
        reader = self.store.reader
        doc, dropped = build_agent_document(
            doc_id, title, source, raw_content, entities, relations,
            min_confidence=s.min_confidence if min_confidence is None else min_confidence,
            known=lambda keys: set(reader.lookup_names(keys)), chunk_tokens=s.chunk_tokens,
            ontology=self._ontology.get("types"), relation_ontology=self._ontology.get("relations"))
        prepared = self.store.prepare(doc)
        with self.store.write(actor=self.actor) as w:
            out = w.apply(scope or s.scope, prepared)
        applied = out if isinstance(out, Applied) else None
        if applied is not None:
            _sync.refresh_mentions(self.store, self._mentions, actor=self.actor,
                                   documents=[applied.document_id], added=applied.names_added,
                                   removed=applied.names_removed,
                                   generations=bool(applied.names_added or applied.names_removed))
            if self.embedder() is not None:
                self.embed()  # as ``ingest`` does: semantic search sees the document at once
        return {
            "doc_id": doc_id,
            "status": "unchanged" if applied is None else (
                "created" if applied.created else "updated"),
            "chunk_count": len(doc.chunks),
            "nodes_added": sum(1 for f in doc.facts if f.predicate == "mentions"),
            "edges_added": sum(1 for f in doc.facts if isinstance(f.object, NameRef)
                               and f.predicate != "mentions"),
            "facts_added": applied.added if applied else 0,
            "facts_retracted": applied.retracted if applied else 0,
            "dropped": [d.as_dict() for d in dropped],
        }

    def assert_fact(self, subject: str, predicate: str, value: str, *,
                    value_type: str = "Literal", datatype: str = "string",
                    confidence: float = 1.0, supporting_text: str = "",
                    valid_from: str | None = None, valid_to: str | None = None,
                    scope: str | None = None, reason: str | None = None) -> FactRow:
        """Record one fact an agent or a person asserts (trust ``asserted``)."""
        if not subject.strip() or not predicate.strip() or not value.strip():
            raise InvalidQuery("subject, predicate and value are required")
        if not 0.0 <= confidence <= 1.0:
            raise InvalidQuery(f"confidence must be within 0..1, got {confidence}")
        if value_type not in ("Entity", "Literal"):
            raise InvalidQuery(f"value_type must be Entity or Literal, got {value_type!r}")
        from .ingest.lexicon import normalize_relation

        pred = normalize_relation(predicate)
        if not pred:
            raise InvalidQuery(f"predicate {predicate!r} holds no letter or digit")
        valid_from = _checked_date("valid_from", valid_from)
        valid_to = _checked_date("valid_to", valid_to)
        if valid_from and valid_to and str(_instant("valid_from", valid_from)) > str(
                _instant("valid_to", valid_to)):
            raise InvalidQuery(f"valid_from {valid_from} is after valid_to {valid_to}")
        if value_type == "Literal":
            _check_datatype(value, datatype)
        obj: NameRef | LiteralValue = NameRef.of(value) if value_type == "Entity" \
            else LiteralValue(value, datatype)
        draft = FactDraft(subject=NameRef.of(self._subject_name(subject)),
                          predicate=pred, object=obj, span=Span(0, 0),
                          supporting_text=supporting_text, extractor="api", trust="asserted",
                          confidence=confidence, valid_from=valid_from, valid_to=valid_to)
        with self.store.write(actor=self.actor) as w:
            fid = w.assert_fact(scope or self.settings.scope, draft, reason=reason)
        return self.store.reader.facts_by_id([fid])[0]

    def _subject_name(self, ref: str) -> str:
        """Assert on an existing entity by its label, so ``Traefik`` means the note."""
        eid = self.store.reader.find_entity(ref.strip(), name_key(ref))
        if eid is None:
            return ref
        return self.store.reader.entities([eid])[eid].label

    def retract_fact(self, fact_id: int, *, reason: str) -> FactRow:
        """Retract one fact (never deleted: ``as_of`` still sees it)."""
        if not reason or not reason.strip():
            raise InvalidQuery("a retraction needs a reason")
        if not 1 <= fact_id < 2**63:  # no store holds such an id (SQLite's are 64-bit)
            raise NotFound("fact", str(fact_id))
        with self.store.write(actor=self.actor) as w:
            ok = w.retract_fact(fact_id, reason=reason)
        rows = self.store.reader.facts_by_id([fact_id])
        if not rows:
            raise NotFound("fact", str(fact_id))
        if not ok:
            raise Conflict(f"fact {fact_id} is already retracted", key=str(fact_id))
        return rows[0]

    def watcher(self, *, on_report: Callable[[SyncReport], None] | None = None,
                on_error: Callable[[BaseException], None] | None = None,
                patterns: Sequence[str] | None = None) -> VaultWatcher:
        """A watcher that applies the vault's changes as they happen (call ``.start()``).

        It follows the files ``patterns`` cover (default ``Settings.patterns``), the same
        globs its syncs read, so a full sync and a watched change agree on what a note is.
        Catch up with ``ingest(patterns=…)`` once it has started: changes made while
        nothing watched are applied then.
        """
        if self.vault is None:
            raise InvalidQuery("no vault to watch: open Knotwork with a vault folder")

        from .ingest.sources import DEFAULT_IGNORES, IGNORE_FILE, matches
        from .sync.watch import VaultWatcher

        globs = self.patterns(patterns)

        def apply(paths: list[str] | None) -> None:
            report = self.ingest(only=paths, patterns=globs)
            if on_report:
                on_report(report)

        return VaultWatcher(self.vault, apply, debounce_ms=self.settings.debounce_ms,
                            on_error=on_error, wanted=lambda rel: matches(rel, globs),
                            rule_files=frozenset({IGNORE_FILE}),
                            ignored_dirs=frozenset(DEFAULT_IGNORES))

    # ------------------------------------------------------------ read

    @_one_state
    def context(self, query: str, *, max_entities: int | None = None,
                link_depth: int | None = None, expand_links: bool = True,
                max_tokens: int | None = None, scopes: Sequence[str] | None = None,
                as_of: str | None = None, valid_at: str | None = None,
                min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                explain: bool = False, evidence: bool = True, fmt: str = "json"
                ) -> KnowledgeContext:
        """Ranked, cited context for ``query``.

        ``max_tokens`` (default ``Settings.context_max_tokens``; 0 = no limit) counts the
        tokens of the answer as rendered in ``fmt`` — what the agent actually receives.
        """
        if not query or not query.strip():
            raise InvalidQuery("query is empty")
        s = self.settings
        opts = ContextOptions(
            max_entities=_positive("max_entities",
                                   s.max_entities if max_entities is None else max_entities),
            link_depth=_bounded("link_depth", s.link_depth if link_depth is None else link_depth,
                                0, 3),
            expand_links=expand_links, max_facts=s.max_facts,
            max_tokens=_budget(s.context_max_tokens if max_tokens is None else max_tokens),
            scopes=list(scopes) if scopes else None, as_of=_instant("as_of", as_of),
            valid_at=_checked_date("valid_at", valid_at),
            min_confidence=_unit("min_confidence", min_confidence),
            trusts=list(trusts) if trusts else None,
            explain=explain, max_evidence=8 if evidence else 0)
        render = renderer(fmt)
        enc = s.token_encoding
        status = self.embedding_status()
        notes: tuple[str, ...] = ()
        if status == "none":
            notes = ("no chunk vectors: answered from full text and links only",)
        elif status.startswith("partial"):
            notes = (f"semantic search saw only the chunks embedded so far ({status})",)
        semantic = None
        if status != "none":
            query_vector = self._early_query_vector(query)

            def semantic(text: str, k: int
                         ) -> tuple[list[tuple[int, float]], tuple[float, float] | None]:
                return self._vector_search(text, k, vec=query_vector())

        try:
            return build_context(
                self._reader(), query, opts,
                measure=Measure(render, token_counter(enc)),
                semantic=semantic, embedding_status=status, notes=notes)
        finally:
            if semantic is not None:
                try:
                    query_vector()  # never leave the thread behind, even on an error
                except Exception:  # noqa: BLE001, S110 - the answer's own error matters more
                    pass

    def render(self, ctx: KnowledgeContext, fmt: str = "markdown") -> str:
        return renderer(fmt)(ctx)

    @_one_state
    def search(self, query: str, *, k: int = 10, scopes: Sequence[str] | None = None,
               mode: str = "bm25", fusion: str | None = None) -> list[SearchHit]:
        """Chunks matching ``query`` with citations: ``bm25``, ``vector`` or ``hybrid``.

        Hybrid fuses the two rankings (top ``max(k, 100)`` of each) with a named fusion
        function (``Settings.fusion``; see ``retrieve.rank.FUSIONS``). A chunk of headings
        alone comes after those with text (``retrieve.pipeline.says_something``).
        """
        k = _positive("k", k)
        if mode not in ("bm25", "vector", "hybrid"):
            raise InvalidQuery(f"mode must be bm25, vector or hybrid, got {mode!r}")
        reader = self._reader()
        depth = max(k, 100)
        runs: list[list[tuple[int, float]]] = []
        stats: list[tuple[float, float] | None] = []
        if mode in ("bm25", "hybrid"):
            hits = fulltext.search_chunks(reader, query, limit=depth, scopes=scopes)
            runs.append([(h.id, h.score) for h in hits])
            stats.append(bm25_moments([h.score for h in hits], self._chunk_count()))
        if mode in ("vector", "hybrid"):
            if self.embedding_status() == "none":
                raise InvalidQuery("no chunk has a vector yet: run `knotwork ingest` with an"
                                   " embedder, or use mode bm25")
            hits_v, vstats = self._vector_search(query, depth)
            runs.append(hits_v)
            stats.append(vstats)
        if len(runs) == 1:
            ranked = runs[0]
        else:
            fuse = fusion_by_name(fusion or self.settings.fusion)
            scores = (fuse(runs, weights=HYBRID_WEIGHTS, stats=stats) if fuse is zscore_sum
                      else fuse(runs))
            ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        # A chunk of headings alone ("## Drawbacks" left empty) comes after those with
        # text, among the first 3k: BM25 favours short rows, and a search for a section's
        # name listed every empty one first. (A word or two of text stays where it ranks:
        # "Zebra crossings." is all a search for it wants.)
        window = ranked[:3 * k]
        rows = reader.chunks([cid for cid, _ in window])
        found = [(cid, score) for cid, score in window
                 if cid in rows and _in_scope(rows[cid].scope, scopes)]
        full = [says_something(rows[cid].text, 1) for cid, _ in found]
        top = ([h for h, f in zip(found, full, strict=True) if f]
               + [h for h, f in zip(found, full, strict=True) if not f])[:k]
        return [SearchHit(cid, rows[cid].path, rows[cid].title, rows[cid].heading_path,
                          rows[cid].line_start, rows[cid].line_end, rows[cid].text, score)
                for cid, score in top]

    def resolve(self, ref: str) -> int:
        """The entity id for an iri, name, alias or label; ``NotFound`` otherwise."""
        eid = self.store.reader.find_entity(ref.strip(), name_key(ref))
        if eid is None:
            raise NotFound("entity", ref)
        return eid

    @_one_state
    def entity(self, ref: str, *, as_of: str | None = None) -> EntityView:
        reader = self.store.reader
        as_of = _instant("as_of", as_of)
        eid = self.resolve(ref)
        row = reader.entities([eid])[eid]
        if as_of is not None and row.created_at > as_of:  # as ``context`` leaves it out
            raise NotFound("entity", ref, message=f"no entity named {ref!r} as of {as_of}:"
                           f" first recorded {row.created_at}")
        return EntityView(
            entity=row, names=tuple(reader.names_of(eid)),
            types=tuple(reader.types([eid]).get(eid, [])),
            facts=tuple(reader.facts([eid], as_of=as_of)),
            incoming=tuple(reader.facts([eid], direction="in", as_of=as_of, limit=200)))

    @_one_state
    def facts(self, ref: str, *, history: bool = False, as_of: str | None = None
              ) -> list[FactRow]:
        """Facts whose subject is the entity: live ones, or all of them with ``history``."""
        return self.store.reader.facts([self.resolve(ref)], history=history,
                                       as_of=_instant("as_of", as_of))

    @_one_state
    def history(self, ref: str, *, offset: int = 0, limit: int | None = None
                ) -> dict[str, object]:
        """Every fact ever recorded about an entity (a page of them: ``offset``, ``limit``)
        and every event that touched those facts; follow ``next_offset`` until it is None.

        Events are read for the page's facts only, all of them: a cap on the whole
        history's events cut off the oldest (a fact's assertion) on busy entities.
        """
        if offset < 0 or (limit is not None and limit < 1):
            raise InvalidQuery(f"offset must be 0 or more and limit 1 or more, got {offset},"
                               f" {limit}")
        facts = self.facts(ref, history=True)
        page = facts[offset:] if limit is None else facts[offset:offset + limit]
        end = offset + len(page)
        events = [asdict(e) for e in self.store.reader.events(
            fact_ids=[f.id for f in page], limit=None)] if page else []
        return {"entity": ref, "offset": offset, "total_facts": len(facts),
                "next_offset": end if end < len(facts) else None,
                "facts": [f.as_dict() for f in page], "events": events}

    @_one_state
    def stats(self) -> dict[str, object]:
        reader = self.store.reader
        out: dict[str, object] = dict(reader.stats())
        out["embedding_status"] = self.embedding_status()
        out["embedder"] = self.settings.embedder
        out["ambiguous_names"] = [{"name": k, "paths": p} for k, p in reader.ambiguous_names()]
        warned, warnings = reader.warnings()
        out["documents_with_warnings"] = warned
        out["warnings"] = [{"path": p, "line": line, "reason": r} for p, line, r in warnings]
        # what the next sync would redo because this knotwork extracts otherwise
        from .ingest import MENTION_RULES, extraction_key

        out["to_reread"] = reader.documents_to_reread(extraction_key(self.settings.chunk_tokens))
        out["mentions_to_find_again"] = reader.meta("mention_rules") != str(MENTION_RULES)
        out["store"] = self.store.path
        return out


def _in_scope(scope: str, scopes: Sequence[str] | None) -> bool:
    return not scopes or scope in scopes


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def _described(m: Mapping[str, Any]) -> str:
    """An embedder manifest for a message: ``hash (1, 64-d)``."""
    dim = f", {m['dim']}-d" if m.get("dim") else ""
    norm = ", not normalised" if m.get("normalized") is False else ""
    return f"{m['name']} ({m['version']}{dim}{norm})"


def _globs(raw: Sequence[str]) -> tuple[str, ...]:
    """The note patterns, each one able to match a path inside the vault.

    Why refuse the others: a glob that matches nothing makes a full sync find no notes,
    and a sync deletes what it does not find (``--pattern '../*.md'`` emptied the store).
    """
    out = tuple(dict.fromkeys(p.strip() for p in raw if p.strip()))
    if not out:
        raise ConfigError("no file patterns: give at least one glob, e.g. **/*.md",
                          key="patterns")
    for glob in out:
        if glob.startswith(("/", "\\")) or glob.endswith(("/", "\\")) \
                or ".." in glob.replace("\\", "/").split("/") \
                or (len(glob) > 2 and glob[1] == ":" and glob[2] in "/\\"):
            raise ConfigError(f"pattern {glob!r} can never match a note: patterns match file"
                              " paths inside the vault (no leading or trailing '/', no '..',"
                              " no drive)", key="patterns")
    return out


def _positive(name: str, value: int) -> int:
    if not isinstance(value, int) or value < 1:
        raise InvalidQuery(f"{name} must be a positive integer, got {value!r}")
    return value


def _budget(value: int) -> int | None:
    """A token budget: 0 means none; a negative or absurdly small one is refused."""
    if not isinstance(value, int) or value < 0 or 0 < value < 50:
        raise InvalidQuery(f"max_tokens must be 0 (no limit) or at least 50, got {value!r}")
    return value or None


def _unit(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidQuery(f"{name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _parsed(name: str, value: object) -> datetime | None:
    """``value``, an ISO 8601 date or time as text, parsed; None for none (None or blank)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidQuery(f"{name} must be an ISO 8601 date or time (2026-03-01,"
                       f" 2026-03-01T12:00:00Z), got {value!r}")


def _instant(name: str, value: str | None) -> str | None:
    """An ISO 8601 date or time, spelled as the store spells record times
    (``store.record_time``), so that comparing it with them compares instants.

    Why: record times are compared as text; ``yesterday`` sorted after every one of them
    (so it meant "now"), and an offset such as ``+01:00`` was compared as characters. A
    time without an offset is taken as UTC; a date alone is its first instant.
    """
    t = _parsed(name, value)
    if t is None:
        return None
    try:
        return record_time(t)
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is past the last UTC instant
        raise InvalidQuery(f"{name} {value!r} is outside the years 1 to 9999 in UTC"
                           ) from None


def _checked_date(name: str, value: str | None) -> str | None:
    """A date or time that must parse, kept as written: valid times come from the notes
    themselves (``valid_from: 2026-03-01``) and are compared as the dates they are."""
    return None if value is None or _parsed(name, value) is None else value.strip()


def _check_datatype(value: str, datatype: str) -> None:
    """A literal must read as its declared datatype (the ones the parser itself writes)."""
    text = value.strip()
    checks: dict[str, Callable[[str], object]] = {
        "integer": int, "number": float, "date": date.fromisoformat,
        "datetime": datetime.fromisoformat,
        "boolean": lambda t: {"true": 1, "false": 0}[t.lower()]}
    check = checks.get(datatype)
    if check is None:
        return
    try:
        check(text)
    except (ValueError, KeyError):
        raise InvalidQuery(f"value {value!r} is not a valid {datatype}") from None


def _bounded(name: str, value: int, lo: int, hi: int) -> int:
    if not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidQuery(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return value
