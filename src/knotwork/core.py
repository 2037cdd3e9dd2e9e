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
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from . import checks, limits
from .config import Settings
from .embed import Embedder
from .embed.shared import shared_embedder
from .errors import ConfigError, InvalidQuery, NotFound
from .facade.base import one_state
from .facade.model import ModelRoom
from .facade.notes import NotesRoom
from .facade.trust import TrustRoom
from .facade.wiki import WikiRoom
from .render import renderer
from .retrieve import ContextOptions, Measure, build_context, token_counter
from .retrieve import embedding as _embedding
from .retrieve.memo import ReadMemo
from .store import Store, StoreReader, open_store
from .types import (
    EntityRow,
    EntityView,
    FactRow,
    KnowledgeContext,
    LiteralValue,
    NameRef,
    SearchHit,
    SyncReport,
    name_key,
)

if TYPE_CHECKING:  # imported where used: a process that only queries never loads them
    from .assemble import Assembled
    from .assemble.run import ConfigLike
    from .ingest.mentions import ScopedFinder
    from .results import (
        Compacted,
        DocumentIngested,
        Embedded,
        History,
        Stats,
    )
    from .retrieve.embedding import FloatArray
    from .retrieve.vectors import VectorIndex
    from .sync import check as _check
    from .sync import files as _sync
    from .sync.context import ContextReport
    from .sync.freshness import EmbedLoop, Freshness
    from .sync.watch import VaultWatcher

#: Chunks waiting for a vector below which ``embed`` runs in this process: starting the
#: workers and their sessions (~0.5 s) is worth it for a first index, not for one edit.
EMBED_POOL_MIN = 256


class Knotwork(ModelRoom, NotesRoom, WikiRoom, TrustRoom):
    """A context graph over one store (and, optionally, one vault folder).

    Its rooms (``knotwork.facade``) hold the model, notes, wiki and trust methods; this
    class composes the store, the settings and the rest."""

    def __init__(self, store: Store, settings: Settings, *, vault: Path | None = None) -> None:
        self.store = store
        self.settings = settings
        self.vault = vault
        self.actor = settings.actor or f"cli:{_user()}"
        self._embedder: Embedder | None = None
        self._vindex: VectorIndex | None = None
        self._finder: ScopedFinder | None = None  # see ``_mentions``
        self._memo = ReadMemo()  # term counts and degrees, dropped at every commit
        self._llm = None  # see ``llm`` (``facade.model``)
        # how a background catch-up with the vault goes (``catch_up_in_background``)
        self.freshness: Freshness | None = None
        self._embed_loop: EmbedLoop | None = None  # see ``embed_in_background``
        self._ontology: dict[str, dict[str, str]] = {}
        self._wiki = None  # see ``wiki`` (``facade.wiki``)
        if settings.ontology:
            from .sync.agent import load_ontology

            self._ontology = load_ontology(settings.ontology)

    @property
    def _mentions(self) -> ScopedFinder:
        """This process's label table, kept current by sync (loaded by the first write)."""
        if self._finder is None:
            from .ingest.mentions import ScopedFinder

            self._finder = ScopedFinder()
        return self._finder

    @classmethod
    def open(cls, vault: str | os.PathLike[str] | None = None, *, db: str | None = None,
             settings: Settings | None = None, **overrides: Any) -> Knotwork:
        """Open the store for ``vault`` or ``db``: by default the vault's own, found at or
        above the vault as git finds ``.git``, else ``<vault>/.knotwork/store.db``
        (``knotwork.sync.stores``)."""
        base = Path(vault).expanduser().resolve() if vault is not None else None
        s = settings or Settings.from_env(**overrides)
        if db is None and settings is None and base is not None and "KNOTWORK_DB" not in os.environ:
            from .sync.stores import store_for_vault

            db = str(store_for_vault(base, scope=s.scope))
        if db is not None:
            s = replace(s, db=db)
        checks.globs(s.patterns.split(","))  # a setting that names no file fails here, not later
        return cls(open_store(s.db, synchronous=s.synchronous), s, vault=base)

    def close(self) -> None:
        if self._embed_loop is not None:
            self._embed_loop.stop()  # after its batch: never end inside the model
        if self._vindex is not None:
            self._vindex.close()  # stops a graph build, saves the graph if it lags
        if self._llm is not None:
            self._llm.close()
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
        from .sync import vault as _vault

        root, only = _vault.sync_target(self.store.reader, root, only, scope=scope or s.scope,
                                        patterns=globs, vault=self.vault)
        report = _sync.sync(self.store, root, scope=scope or s.scope, actor=self.actor,
                            finder=self._mentions,
                            patterns=globs, force=force, dry_run=dry_run,
                            max_bytes=s.max_file_bytes, chunk_tokens=s.chunk_tokens,
                            workers=s.workers, progress=progress, only=only, replace=replace,
                            mention_progress=mention_progress, dialect=s.dialect)
        if embed and not dry_run and self.embedder() is not None:
            self.embed(progress=embed_progress)
        return report

    def add_context(self, path: str | os.PathLike[str], *, namespace: str | None = None,
                    type: str | None = None, force: bool = False, dry_run: bool = False,
                    patterns: Sequence[str] | None = None, vault_only: bool = False,
                    progress: _sync.Progress | None = None,
                    scopes: Sequence[str] | None = None, actor: str | None = None,
                    embed: bool = True, embed_progress: _sync.Progress | None = None
                    ) -> ContextReport:
        """Read project documents (ADRs, specs, KEPs, RFCs, docs) into typed records in
        scopes ``{namespace}__{category}`` (``knotwork.sync.context``). ``vault_only``
        (the server's and MCP's): ``path`` is taken in the vault and must stay inside it.
        ``scopes`` (a scoped caller's): ``Forbidden``, writing nothing, when a record
        would land in a scope outside them. ``actor``: who writes (default ``self.actor``),
        as on every write method (a server's: the request's). Then, as ``ingest`` does,
        the new chunks are embedded (``embed``), so the records are found by meaning too."""
        from .sync import context as _context

        if vault_only:
            path = _context.within(self.vault, path)
        s = self.settings

        def run(dry: bool) -> ContextReport:
            return _context.add_context(
                self.store, path, namespace=namespace, actor=actor or self.actor, type=type,
                force=force, dry_run=dry, patterns=self.patterns(patterns),
                max_bytes=s.max_file_bytes, chunk_tokens=s.chunk_tokens,
                finder=self._mentions, progress=progress)

        if scopes:
            from .trust import tokens

            dry = run(True)
            targets = {sc for _, sc, _ in dry.parsed.values()}
            if dry.deleted:  # it may delete from any category of the namespace that has any
                ns = (_context.namespace_name(namespace) if namespace else
                      _context.default_namespace(Path(path).expanduser().resolve()))
                targets |= {sc for c in _context.CATEGORIES
                            if self.store.reader.document_index(sc := _context.scope_of(ns, c))}
            tokens.within_scopes(targets, scopes)
        report = run(dry_run)
        if embed and not dry_run and self.embedder() is not None:
            self.embed(progress=embed_progress)
        return report

    def patterns(self, given: Sequence[str] | None = None) -> tuple[str, ...]:
        """The globs of the vault's notes: ``given``, else ``Settings.patterns``."""
        return checks.globs(list(given) if given else self.settings.patterns.split(","))

    # ------------------------------------------------------------ vectors

    def embedder(self) -> Embedder | None:
        """The configured embedder (loaded on first use), or None when switched off."""
        if self._embedding_off():
            return None
        if self._embedder is None:
            self._embedder = shared_embedder(self._embedder_spec())  # one a process
        return self._embedder

    def _embedder_spec(self) -> str:
        """The configured embedder's spec; ``auto`` (the default) resolved against the
        store: the model its vectors were made with, else the default for new stores."""
        return _embedding.embedder_spec(self.store.reader, self.settings.embedder)

    def embed(self, *, progress: _sync.Progress | None = None, batch: int = 64,
              window: int = 1024) -> Embedded:
        """Embed every live chunk that has no vector yet (``retrieve.embedding``), then,
        past ``ann_threshold``, leave a graph the next search can load."""
        from .results import Embedded

        emb = self.embedder()
        if emb is None:
            return Embedded(embedded=0, tokens=0, embedder=None, seconds=0.0)

        def prepare(vectors: int) -> None:
            self.vector_index(emb.dim).prepare(self.store.reader, vectors=vectors)

        with self._embedding_workers(emb) as pooled:
            return _embedding.embed_pending(self.store, pooled or emb, actor=self.actor,
                                            progress=progress, batch=batch, window=window,
                                            prepare=prepare)

    @contextmanager
    def _embedding_workers(self, emb: Embedder) -> Iterator[Embedder | None]:
        """A ``PooledEmbedder`` over a process a core (``Settings.workers``) while this
        embeds, when the model runs here, at least ``EMBED_POOL_MIN`` chunks wait, and
        this process may fork (``sync.pool.can_fork``: no other thread); else None."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from .embed.pool import POOLED_KINDS, PooledEmbedder
        from .embed.shared import SHARED_KINDS
        from .sync import pool as _pools

        spec = SHARED_KINDS.get(self._embedder_spec().strip().lower(), "")
        workers = self.settings.workers or _pools.cores()
        if (spec not in POOLED_KINDS or workers < 2 or not _pools.can_fork()
                or self.store.reader.vector_status()[1] < EMBED_POOL_MIN):
            yield None
            return
        with _pools.running(lambda: ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                initializer=_pools.guard_worker, initargs=(os.getpid(),))) as executor:
            yield PooledEmbedder(emb, spec, executor, workers)

    def reindex_embeddings(self, *, progress: _sync.Progress | None = None) -> Embedded:
        """Drop every vector and embed again with the configured model."""
        if self.embedder() is None:
            raise ConfigError("no embedder configured", key="embedder",
                              hint="set KNOTWORK_EMBEDDER=auto")
        with self.store.write(actor=self.actor) as w:
            w.clear_vectors()
        return self.embed(progress=progress)

    def check(self, *, repair: bool = False, sample: int = 200, vectors: int = 32
              ) -> _check.CheckReport:
        """Verify every invariant of the store (``sync.check``); ``repair`` rebuilds the
        derived indexes from the source of truth first and reports what is left."""
        from .sync import check as _check

        emb = None if self._embedding_off() else self.embedder()
        return _check.run(self.store, embed=emb.embed if emb else None, actor=self.actor,
                          finder=self._mentions, repair_it=repair,
                          embed_pending=self.embed if emb else None, sample=sample,
                          vectors=vectors)

    def compact(self, *, vacuum: bool = False) -> Compacted:
        """Give back the room that history takes: drop the chunks of past versions that
        no fact cites, and store past versions' text compressed. Facts, versions, live
        chunks and every cited chunk stay, so no answer, history or citation changes.
        ``vacuum`` also rewrites the file to its used pages, which returns the packed
        text's room (a copy of the whole store: writers wait for it, readers go on)."""
        from .results import Compacted

        return Compacted(**self.store.compact(actor=self.actor, vacuum=vacuum))

    def _embedding_off(self) -> bool:
        return self.settings.embedder.strip().lower() in ("", "none", "off")

    def embedding_status(self) -> str:
        """``complete`` | ``partial n/m`` | ``none``: what semantic search can see."""
        return _embedding.embedding_status(self.store.reader, off=self._embedding_off())

    def _vector_search(self, query: str, k: int, vec: FloatArray | None = None, *,
                       scopes: Sequence[str] | None = None) -> _embedding.VectorHits:
        emb = self.embedder()
        if emb is None:
            return [], None
        _embedding.check_manifest(self.store.reader, emb)
        return _embedding.vector_search(self.store.reader, self.vector_index(emb.dim), emb,
                                        query, k, vec=vec, scopes=scopes)

    def _vector_text(self, query: str, scopes: Sequence[str] | None) -> str:
        """The words of ``query`` its vector is taken of (``retrieve.vector_text``)."""
        from .retrieve.vector_text import vector_text

        return vector_text(self._reader(), query, scopes=scopes)

    def vector_index(self, dim: int) -> VectorIndex:
        """This process's vector index (``retrieve.embedding.open_vector_index``)."""
        if self._vindex is None or self._vindex.dim != dim:
            if self._vindex is not None:  # another model's vectors: its graph is of no use
                self._vindex.close()
            self._vindex = _embedding.open_vector_index(
                self.store.path, dim, ann_threshold=self.settings.ann_threshold)
        return self._vindex

    def _reader(self) -> StoreReader:
        """The store's reader, with counts that repeat across queries remembered."""
        return self._memo.reader(self.store.reader, self.store.change_token())

    def ingest_document(self, doc_id: str, title: str, source: str, raw_content: str, *,
                        entities: Sequence[Mapping[str, Any]] = (),
                        relations: Sequence[Mapping[str, Any]] = (),
                        scope: str | None = None, min_confidence: float | None = None,
                        actor: str | None = None) -> DocumentIngested:
        """Store an agent's document with the entities and relations it extracted.

        Re-sending a ``doc_id`` follows the ownership rule: facts the new payload no longer
        states are retracted. Dropped entities and relations come back with their reasons.
        """
        from .sync import writes as _writes
        from .sync.agent import build_agent_document

        checks.agent_document(doc_id, title, source, raw_content, entities, relations)
        s = self.settings
        reader = self.store.reader
        doc, dropped = build_agent_document(
            doc_id, title, source, raw_content, entities, relations,
            min_confidence=s.min_confidence if min_confidence is None else min_confidence,
            known=lambda keys: set(reader.lookup_names(keys)), chunk_tokens=s.chunk_tokens,
            ontology=self._ontology.get("types"), relation_ontology=self._ontology.get("relations"))
        applied = _writes.write_document(self.store, self._mentions, doc,
                                         scope=scope or s.scope, actor=actor or self.actor)
        if applied is not None:
            if self.embedder() is not None:
                self.embed()  # as ``ingest`` does: semantic search sees the document at once
        from .results import DocumentIngested

        return DocumentIngested(
            doc_id=doc_id,
            status="unchanged" if applied is None else (
                "created" if applied.created else "updated"),
            chunk_count=len(doc.chunks),
            nodes_added=sum(1 for f in doc.facts if f.predicate == "mentions"),
            edges_added=sum(1 for f in doc.facts if isinstance(f.object, NameRef)
                            and f.predicate != "mentions"),
            facts_added=applied.added if applied else 0,
            facts_retracted=applied.retracted if applied else 0,
            dropped=tuple(d.as_dict() for d in dropped))

    def assert_fact(self, subject: str, predicate: str, value: str, *,
                    value_type: str = "Literal", datatype: str = "string",
                    confidence: float = 1.0, supporting_text: str = "",
                    valid_from: str | None = None, valid_to: str | None = None,
                    scope: str | None = None, reason: str | None = None,
                    actor: str | None = None) -> FactRow:
        """Record one fact an agent or a person asserts (trust ``asserted``)."""
        checks.fact_text(subject, predicate, value, supporting_text, reason)
        checks.assertion(subject, predicate, value, value_type=value_type, confidence=confidence)
        from .sync import writes as _writes

        pred = _writes.predicate(predicate)
        valid_from, valid_to = checks.validity(valid_from, valid_to)
        if value_type == "Literal":
            checks.check_datatype(value, datatype)
        obj: NameRef | LiteralValue = NameRef.of(value) if value_type == "Entity" \
            else LiteralValue(value, datatype)
        return _writes.assert_fact(self.store, subject, pred, obj,
                                   scope=scope or self.settings.scope,
                                   actor=actor or self.actor,
                                   confidence=confidence, supporting_text=supporting_text,
                                   valid_from=valid_from, valid_to=valid_to, reason=reason)

    def retract_fact(self, fact_id: int, *, reason: str, scopes: Sequence[str] | None = None,
                     actor: str | None = None) -> FactRow:
        """Retract one fact (never deleted: ``as_of`` still sees it); a fact outside
        ``scopes`` is as unknown as one that does not exist."""
        from .sync import writes as _writes

        checks.text("reason", reason, limits.REASON_CHARS, required=True)
        fact_id = checks.fact_id(fact_id)
        if scopes and not any(f.scope in scopes
                              for f in self.store.reader.facts_by_id([fact_id])):
            raise NotFound("fact", str(fact_id))
        return _writes.retract_fact(self.store, fact_id, reason=reason,
                                    actor=actor or self.actor)

    def catch_up_in_background(self, *, on_report: Callable[[SyncReport], None],
                               on_error: Callable[[BaseException], None]) -> Freshness:
        """Sync the vault on a thread of its own, then embed; ``self.freshness`` (returned)
        tells answers how far it got (``index_fresh``, ``pending_changes``)."""
        import threading

        from .sync.freshness import Freshness, run_catch_up

        fresh = self.freshness = Freshness()
        threading.Thread(target=run_catch_up, name="knotwork-catch-up", daemon=True, args=(
            lambda progress: self.ingest(embed=False, progress=progress),
            lambda: self.embed_in_background(on_error), fresh),
            kwargs={"on_report": on_report, "on_error": on_error}).start()
        return fresh

    def embed_in_background(self, on_error: Callable[[BaseException], None] | None = None
                            ) -> EmbedLoop | None:
        """Embed the chunks without a vector on this object's embedding thread (one per
        object, so rounds never overlap); None when embedding is off."""
        if self.embedder() is None:
            return None
        if self._embed_loop is None:
            from .sync.freshness import EmbedLoop

            self._embed_loop = EmbedLoop(lambda progress: self.embed(progress=progress),
                                         on_error)
        self._embed_loop.kick()
        return self._embed_loop

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

        from .sync import vault as _vault

        globs = self.patterns(patterns)

        def apply(paths: list[str] | None) -> None:
            # the text, facts and links at once; their vectors on the embedding thread, so
            # the next change is not held behind a backlog of chunks to embed
            report = self.ingest(only=paths, patterns=globs, embed=False)
            if on_report:
                on_report(report)
            self.embed_in_background(on_error)

        return _vault.watcher(self.vault, apply, patterns=globs, on_error=on_error,
                              debounce_ms=self.settings.debounce_ms)

    # ------------------------------------------------------------ read

    @one_state
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
        checks.text("query", query, limits.QUERY_CHARS, required=True)
        s = self.settings
        opts = ContextOptions(
            max_entities=checks.positive(
                "max_entities", s.max_entities if max_entities is None else max_entities),
            link_depth=checks.bounded(
                "link_depth", s.link_depth if link_depth is None else link_depth, 0, 3),
            expand_links=expand_links, max_facts=s.max_facts,
            max_tokens=checks.budget(s.context_max_tokens if max_tokens is None else max_tokens),
            scopes=list(scopes) if scopes else None, as_of=checks.instant("as_of", as_of),
            valid_at=checks.checked_date("valid_at", valid_at),
            min_confidence=checks.unit("min_confidence", min_confidence),
            trusts=checks.trusts(trusts),
            explain=explain, max_evidence=8 if evidence else 0, **self._wiki_first())
        measure = Measure(renderer(fmt), token_counter(s.token_encoding))
        status = self.embedding_status()
        semantic = (nullcontext(None) if status == "none" else
                    _embedding.semantic_search(self.embedder(), self._vector_text(
                        query, opts.scopes), functools.partial(
                        self._vector_search, scopes=opts.scopes)))
        with semantic as search:
            from .trust.history import AsOfReader
            from .trust.truth import TruthReader

            # as of a time: the store as it stood then (``trust.history``; the memo of
            # counts is of the store as it stands now)
            base = (self._reader() if opts.as_of is None
                    else cast(StoreReader, AsOfReader(self.store.reader, opts.as_of)))
            reader = TruthReader(base, opts.valid_at, as_of=opts.as_of)
            return build_context(reader, query, opts, measure=measure, semantic=search,
                                 embedding_status=status, notes=_embedding.status_notes(status),
                                 fresh=self.freshness() if self.freshness else None)

    def _wiki_first(self) -> dict[str, Any]:
        """``context``'s wiki options: the iri prefix of the vault's wiki pages, if any."""
        folder = self.settings.wiki_dir.strip("/")
        if self.vault is None or not folder or not (self.vault / folder).is_dir():
            return {}
        from .domain.ids import note_iri

        scope = self.settings.scope
        return {"wiki_iri": note_iri(scope, f"{folder}/"),
                "wiki_skip": (note_iri(scope, f"{folder}/index.md"),
                              note_iri(scope, f"{folder}/log.md"))}
    def assemble(self, query: str, *, config: ConfigLike = None, max_tokens: int | None = None,
                 allow_partial: bool | None = None, tiers: Mapping[str, Any] | None = None,
                 scopes: Sequence[str] | None = None) -> Assembled:
        """Context for ``query`` from tiers of sources, fitted to a token budget
        (``knotwork.assemble``). ``config``: a TOML path, a dict of its shape, or None for
        the ``assemble_config`` setting (else one ``local`` tier); ``tiers`` overrides
        ``top_k``/``min_score`` per tier for this call; ``scopes`` bound the local reads."""
        from .assemble import SourceEnv
        from .assemble import run as _asm

        s = self.settings
        cfg = _asm.resolve(config if config is not None else (s.assemble_config or None),
                           max_tokens=s.context_max_tokens or None)
        env = SourceEnv(local=_asm.local_runner(self.context, scopes),
                        embedder=_asm.embedder_opener((self._embedder_spec(),
                                                       self.embedder)),
                        # an outside collection's vectors name no model: by default the
                        # bundled MiniLM as shipped, the closest to what fills them
                        default_embedder="minilm" if s.embedder.strip().lower() == "auto"
                        else s.embedder, base_dir=cfg.base_dir)
        return _asm.run(query, cfg, env, encoding=s.token_encoding, max_tokens=max_tokens,
                        allow_partial=allow_partial, tiers=tiers)

    def assemble_tiers(self) -> tuple[str, ...]:
        """The names of the tiers ``assemble`` reads (the ``assemble_config`` setting's)."""
        from .assemble import run as _asm

        s = self.settings
        cfg = _asm.resolve(s.assemble_config or None, max_tokens=s.context_max_tokens or None)
        return tuple(t.name for t in cfg.tiers)

    def parser_types(self) -> tuple[str, ...]:
        """The parser names ``add_context(type=)`` takes."""
        from .ingest.parsers import default_registry

        return tuple(sorted(p.type for p in default_registry().parsers))

    def render(self, ctx: KnowledgeContext, fmt: str = "markdown") -> str:
        return renderer(fmt)(ctx)

    def count_tokens(self, text: str) -> int:
        """The tokens of ``text`` in the encoding answers are budgeted in."""
        return token_counter(self.settings.token_encoding)(text)

    @one_state
    def search(self, query: str, *, k: int = 10, scopes: Sequence[str] | None = None,
               mode: str = "bm25", fusion: str | None = None, per_note: int | None = None
               ) -> list[SearchHit]:
        """Chunks matching ``query`` with citations: ``bm25``, ``vector`` or ``hybrid``
        (``retrieve.search``); hybrid fuses with ``fusion``, default ``Settings.fusion``;
        ``per_note``: at most that many hits of one note."""
        from .retrieve import search as _search  # loaded by the first search, not by context

        checks.text("query", query, limits.QUERY_CHARS)
        k = checks.positive("k", k)
        vectors, status = None, "none"
        if mode in ("vector", "hybrid"):
            status = self.embedding_status()
            if status != "none":
                text = self._vector_text(query, scopes)
                vectors = lambda _q, k: self._vector_search(text, k, scopes=scopes)  # noqa: E731
        return _search.search(self._reader(), query, k=k, mode=mode, scopes=scopes,
                              fusion=fusion or self.settings.fusion, vectors=vectors,
                              per_note=None if per_note is None
                              else checks.positive("per_note", per_note),
                              partial=status.startswith("partial"))

    def resolve(self, ref: str) -> int:
        """The entity id for an iri, name, alias or label; ``NotFound`` otherwise."""
        checks.text("ref", ref, limits.REF_CHARS)
        eid = self.store.reader.find_entity(ref.strip(), name_key(ref))
        if eid is None:
            raise NotFound("entity", ref)
        return eid

    def _resolve_in(self, ref: str, scopes: Sequence[str] | None) -> int:
        """``resolve``, but an entity of a scope outside ``scopes`` is not found (a
        scoped reader must not learn that it exists)."""
        if not scopes:
            return self.resolve(ref)
        eid = self.store.reader.find_entity(ref.strip(), name_key(ref), scopes=scopes)
        if eid is None or self.store.reader.entities([eid])[eid].scope not in scopes:
            raise NotFound("entity", ref)
        return eid

    @one_state
    def entity(self, ref: str, *, as_of: str | None = None,
               scopes: Sequence[str] | None = None) -> EntityView:
        from .domain.supersession import live_status

        reader = self.store.reader
        as_of = checks.instant("as_of", as_of)
        eid = self._resolve_in(ref, scopes)
        row = reader.entities([eid])[eid]
        from .trust import truth

        if as_of is None:
            _refuse_deleted(reader, eid, row, ref)
        if as_of is not None and row.created_at > as_of:  # as ``context`` leaves it out
            raise NotFound("entity", ref, message=f"no entity named {ref!r} as of {as_of}:"
                           f" first recorded {row.created_at}")
        return EntityView(
            entity=row, names=tuple(reader.names_of(eid)),
            types=tuple(truth.TruthReader(reader, None, as_of=as_of).types([eid]).get(eid, [])),
            facts=tuple(live_status(truth.current(
                reader, reader.facts([eid], as_of=as_of, scopes=scopes), scopes=scopes,
                as_of=as_of))),
            incoming=tuple(reader.facts([eid], direction="in", as_of=as_of, limit=200,
                                        scopes=scopes)))

    @one_state
    def facts(self, ref: str, *, history: bool = False, as_of: str | None = None,
              scopes: Sequence[str] | None = None, trusts: Sequence[str] | None = None,
              valid_at: str | None = None) -> list[FactRow]:
        """Facts whose subject is the entity: live ones, or all of them with ``history``.

        ``trusts`` limits them by trust state (``stated,approved``; a rejected fact only
        when it names ``rejected`` — or with ``history``, which keeps every fact). A live
        ``superseded`` status (stated by the superseding record) outranks the record's own.
        A deleted note is not found, but with ``history`` (or ``as_of``: what was known)."""
        from .domain.supersession import live_status
        from .trust import truth

        reader = self.store.reader
        eid = self._resolve_in(ref, scopes)
        if not history and as_of is None:
            _refuse_deleted(reader, eid, reader.entities([eid])[eid], ref)
        as_of = checks.instant("as_of", as_of)
        rows = reader.facts([eid], history=history, as_of=as_of, scopes=scopes,
                            trusts=checks.trusts(trusts))
        rows = truth.current(reader, rows, valid_at=checks.checked_date("valid_at", valid_at),
                             scopes=scopes, as_of=as_of)
        return rows if history else live_status(rows)

    @one_state
    def history(self, ref: str, *, offset: int = 0, limit: int | None = None,
                scopes: Sequence[str] | None = None) -> History:
        """Every fact ever recorded about an entity (a page of them: ``offset``, ``limit``)
        and every event that touched those facts; follow ``next_offset`` until it is None.

        Events are read for the page's facts only, all of them: a cap on the whole
        history's events cut off the oldest (a fact's assertion) on busy entities.
        """
        if offset < 0 or (limit is not None and limit < 1):
            raise InvalidQuery(f"offset must be 0 or more and limit 1 or more, got {offset},"
                               f" {limit}")
        facts = self.facts(ref, history=True, scopes=scopes)
        page = facts[offset:] if limit is None else facts[offset:offset + limit]
        end = offset + len(page)
        events = tuple(asdict(e) for e in self.store.reader.events(
            fact_ids=[f.id for f in page], limit=None)) if page else ()
        from .results import History

        return History(entity=ref, offset=offset, total_facts=len(facts),
                       next_offset=end if end < len(facts) else None, facts=tuple(page),
                       events=events)

    def _vault_root(self) -> str | None:
        """The vault this store syncs: this object's, else the folder last synced."""
        from .domain.ids import root_key

        return str(self.vault) if self.vault else self.store.reader.meta(
            root_key(self.settings.scope))

    def _extraction_key(self) -> str:
        return _extraction_key_of(self)

    @one_state
    def stats(self) -> Stats:
        """The store's counts, its warnings and names claimed twice, how far embedding
        got, and what the next sync would redo because this knotwork extracts otherwise."""
        from .ingest import MENTION_RULES
        from .results import AmbiguousName, DocumentWarning, Stats

        reader = self.store.reader
        warned = reader.warnings()
        return Stats(
            **reader.stats(), embedding_status=self.embedding_status(),
            embedder=self._embedder_spec(),
            ambiguous_names=tuple(AmbiguousName(k, tuple(p))
                                  for k, p in reader.ambiguous_names()),
            documents_with_warnings=warned.documents,
            warnings=tuple(DocumentWarning(w.path, w.line, w.reason) for w in warned.first),
            to_reread=_to_reread(reader, self._extraction_key()),
            mentions_to_find_again=reader.meta("mention_rules") != str(MENTION_RULES),
            store=self.store.path, vault=self._vault_root())



def _refuse_deleted(reader: StoreReader, eid: int, row: EntityRow, ref: str) -> None:
    """Raise ``NotFound`` for a note whose file was deleted: a live note always has its
    path and stem among its names, a deleted one keeps none, only its history."""
    if row.kind != "note" or reader.names_of(eid):
        return
    gone = [f.retracted_at for f in reader.facts([eid], history=True) if f.retracted_at]
    when = f" at {max(gone)}" if gone else ""
    raise NotFound("entity", ref, message=f"{row.label!r} is a deleted note (deleted{when});"
                   " its history stays: `knotwork facts REF --history`")


def _extraction_key_of(kw: Knotwork) -> str:
    """The extraction key the next sync of ``kw``'s vault reads its notes under."""
    from .domain.ids import root_key
    from .ingest import extraction_key
    from .ingest.dialects import reading, resolve

    known = kw.store.reader.meta(root_key(kw.settings.scope))
    root = kw.vault or (Path(known) if known else None)
    with reading(resolve(kw.settings.dialect, root)):
        return extraction_key(kw.settings.chunk_tokens)



def _to_reread(reader: StoreReader, base: str) -> int:
    """The live documents extracted under other rules than any parser's now: each
    typed parser's documents carry ``base`` with its type and version appended."""
    other = reader.documents_to_reread(base)
    if not other:
        return 0
    from .ingest.parsers import default_registry

    keys = default_registry().keys(base) - {base}
    live = reader.documents_to_reread("\x00")  # no document has this key: all of them
    return other - sum(live - reader.documents_to_reread(k) for k in keys)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def migrate_store(source: str, target: str) -> tuple[Any, Any]:
    """Copy the store at URL ``source`` into the empty store at URL ``target``, every
    version, fact, event and vector, and verify it; the two ``store.migrate.Summary`` s
    (counts per table and the checksum), equal. Raises ``StoreError`` otherwise."""
    from .store import migrate as _migrate

    src = open_store(source)
    try:
        dst = open_store(target)
        try:
            return _migrate.migrate(src, dst)
        finally:
            dst.close()
    finally:
        src.close()
