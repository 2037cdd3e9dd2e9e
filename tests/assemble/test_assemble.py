"""Assembly on real parts that need no process: memory sources, a real SQLite store as the
``local`` source, sources that raise or hang, the TOML config, plugins found through
entry points, and the CLI through Typer's runner (the contract's JSON shape)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knotwork import ConfigError, InvalidQuery, Knotwork
from knotwork.assemble import (
    Budget,
    Fetched,
    Item,
    Override,
    SourceEnv,
    Tier,
    assemble,
    load_config,
)
from knotwork.assemble.sources.memory import MemorySource
from knotwork.cli.main import app
from knotwork.retrieve.budget import count_tokens

from ..frontends.conftest import wait_for, write_vault

DECISIONS = {
    "decisions/ADR-007-deploys.md": """\
---
type: decision
status: accepted
---
# ADR-007: Heliograph deploys through the blue pipeline

Heliograph deploys every Friday through the blue pipeline. Rollbacks take one command.
The pipeline runs on [[kota]].
""",
}
KEYS = {"results", "total_tokens", "truncated", "tier_counts", "errors"}
ITEM_KEYS = {"content", "source", "score", "tier", "tokens", "pinned"}


def memory(name: str, *items: Item) -> MemorySource:
    return MemorySource(name, items, match="all")


class Boom:
    name = "boom"

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        raise RuntimeError("the index is gone")


class Hang:
    name = "hang"

    def __init__(self) -> None:
        self.release = threading.Event()

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched:
        self.release.wait(30)
        return Fetched((Item("too late", "late:1", 1.0),))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Knotwork]:
    """One store, two vaults: the homelab notes (scope default) and the decisions."""
    db = str(tmp_path / "kw.db")
    with Knotwork.open(write_vault(tmp_path / "notes"), db=db) as kw:
        kw.ingest()
    with Knotwork.open(write_vault(tmp_path / "dec", DECISIONS), db=db,
                       scope="myapp__project_decisions") as kw:
        kw.ingest()
    with Knotwork.open(None, db=db) as kw:
        yield kw


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- failures


def test_a_source_that_raises_or_hangs_is_reported_and_the_rest_is_assembled() -> None:
    hang = Hang()
    tiers = [Tier("facts", 1, (memory("m", Item("Heliograph deploys on Fridays.", "a:1", .9)),
                               Boom(), hang), timeout=0.4)]
    start = time.monotonic()
    out = assemble("heliograph", tiers, Budget(500))
    took = time.monotonic() - start
    hang.release.set()
    assert took < 1.5, took  # the hung source costs its timeout, not its 30 s
    assert [r.item.source for r in out.results] == ["a:1"]
    assert {(e.tier, e.source): e.reason for e in out.errors} == {
        ("facts", "boom"): "RuntimeError: the index is gone",
        ("facts", "hang"): "timed out after 0.4 s"}


def test_each_source_may_have_its_own_timeout() -> None:
    slow, fast = Hang(), Hang()
    fast.name = "fast"  # type: ignore[misc]
    tiers = [Tier("t", 1, (slow, fast), timeout=5.0, timeouts={"fast": 0.2, "hang": 0.5})]
    start = time.monotonic()
    out = assemble("q", tiers, Budget(None))
    slow.release.set()
    fast.release.set()
    assert time.monotonic() - start < 1.5
    assert sorted(e.reason for e in out.errors) == ["timed out after 0.2 s",
                                                    "timed out after 0.5 s"]


def test_no_thread_outlives_the_assembly() -> None:
    """A process that assembles and then ingests still forks its workers: no idle source
    thread is left behind (the sync refuses to fork a process with other threads)."""
    before = threading.active_count()
    assemble("q", [Tier("t", 1, (memory("a", Item("x", "x:1")), memory("b")))], Budget(None))
    wait_for(lambda: threading.active_count() <= before, timeout=2)


def test_malformed_items_are_left_out_and_reported() -> None:
    bad = memory("m", Item("fine text", "ok:1", 0.5), Item("x", "nan:1", float("nan")),
                 Item("   ", "blank:1", 0.4))
    out = assemble("q", [Tier("t", 1, (bad,))], Budget(None))
    assert [r.item.source for r in out.results] == ["ok:1"]
    assert out.errors[0].reason.startswith("2 item(s) without text")


# ---------------------------------------------------------------- budget


def test_pinned_items_are_kept_even_alone_over_the_budget() -> None:
    big = Item("Heliograph must never deploy on a holiday. " * 30, "policy:1", 0.1, pinned=True)
    small = Item("A short note.", "note:1", 0.9)
    out = assemble("q", [Tier("t", 1, (memory("m", big, small),))], Budget(60))
    assert [r.item.source for r in out.results] == ["policy:1"]
    assert out.truncated and out.total_tokens > 60
    assert out.overrun == out.total_tokens - 60 == count_tokens(out.text) - 60


def test_allow_partial_cuts_an_item_after_its_last_whole_sentence_that_fits() -> None:
    text = " ".join(f"Sentence number {n} says something about deploys." for n in range(40))
    tiers = [Tier("t", 1, (memory("m", Item(text, "long:1", 0.9)),))]
    whole = assemble("q", tiers, Budget(150))
    assert whole.results == () and whole.truncated  # skipped: it does not fit
    out = assemble("q", tiers, Budget(150, allow_partial=True))
    (r,) = out.results
    assert r.cut and text.startswith(r.item.content) and r.item.content.endswith("deploys.")
    assert len(r.item.content) < len(text)
    assert 150 - 12 < out.total_tokens <= 150  # the room is used, not wasted
    assert "· cut" in out.text.splitlines()[2]


def test_chars_per_token_counts_the_seeds_estimate() -> None:
    tiers = [Tier("t", 1, (memory("m", Item("x" * 400, "x:1", 1.0)),))]
    out = assemble("q", tiers, Budget(None, chars_per_token=4))
    assert out.total_tokens == -(-len(out.text) // 4)


def test_a_budget_smaller_than_the_heading_is_refused() -> None:
    with pytest.raises(InvalidQuery, match="cannot hold even the heading"):
        assemble("a long question " * 10, [Tier("t", 1, (memory("m"),))], Budget(5))


# ---------------------------------------------------------------- merge


def test_duplicates_by_source_by_text_and_by_containment_keep_the_first_copy() -> None:
    passage = "Heliograph deploys through the blue pipeline, every Friday, with one-command" \
              " rollbacks and a canary host first."
    hi = memory("hi", Item(passage, "adr:7", 0.2), Item("Other text.", "same:1", 0.1))
    lo = memory("lo", Item("> " + passage.upper().replace(" ", "  "), "copy:1", 0.99),
                Item("Completely different.", "same:1", 0.9),
                Item(passage[:90], "part:1", 0.95),
                Item("Intro. " + passage + " More.", "super:1", 0.5))
    out = assemble("q", [Tier("low", 2, (lo,)), Tier("high", 1, (hi,))], Budget(None))
    assert [(r.tier, r.item.source) for r in out.results] == [
        ("high", "adr:7"), ("high", "same:1"), ("low", "super:1")]
    assert out.tier_counts == {"low": 1, "high": 2}


def test_a_pinned_copy_dropped_as_a_duplicate_pins_the_copy_kept() -> None:
    hi = memory("hi", Item("The same words.", "a:1", 0.5))
    lo = memory("lo", Item("the same   words.", "b:1", 0.5, pinned=True))
    out = assemble("q", [Tier("hi", 1, (hi,)), Tier("lo", 2, (lo,))], Budget(None))
    assert [(r.item.source, r.item.pinned) for r in out.results] == [("a:1", True)]


def test_top_k_and_min_score_per_tier_and_per_call() -> None:
    items = [Item(f"note {n}", f"n:{n}", n / 10) for n in range(10)]
    tiers = [Tier("t", 1, (memory("m", *items),), top_k=3, min_score=0.5)]
    out = assemble("q", tiers, Budget(None))
    assert [r.item.source for r in out.results] == ["n:9", "n:8", "n:7"]
    out = assemble("q", tiers, Budget(None), overrides={"t": Override(top_k=8, min_score=0.75)})
    assert [r.item.source for r in out.results] == ["n:9", "n:8"]
    with pytest.raises(InvalidQuery, match="no tier named 'x'"):
        assemble("q", tiers, Budget(None), overrides={"x": Override(top_k=1)})
    with pytest.raises(InvalidQuery, match="top_k"):
        assemble("q", tiers, Budget(None), overrides={"t": Override(top_k=0)})


# ---------------------------------------------------------------- config and local


def test_the_issue_config_on_a_real_store(store: Knotwork, tmp_path: Path) -> None:
    cfg = write(tmp_path / "knotwork.toml", """\
[budget]
max_tokens = 1500
[[tiers]]
name = "ground_truth"
priority = 1
sources = ["local:scope=myapp__project_decisions"]
top_k = 8
pin = true
[[tiers]]
name = "notes"
priority = 2
sources = ["local", {source = "memory", items = [{content = "Traefik is the proxy.", score = 0.1}]}]
top_k = 4
""")
    out = store.assemble("how does heliograph deploy", config=cfg)
    d = out.as_dict()
    assert set(d) == KEYS and all(set(r) == ITEM_KEYS for r in d["results"])
    tiers = [r["tier"] for r in d["results"]]
    assert tiers == sorted(tiers, key=["ground_truth", "notes"].index)
    truth = [r for r in d["results"] if r["tier"] == "ground_truth"]
    assert truth and all(r["pinned"] for r in truth)
    assert {r["source"] for r in truth} >= {
        "decisions/ADR-007-deploys.md:5-8",
        "kw:myapp__project_decisions/note/decisions/ADR-007-deploys"}
    assert d["total_tokens"] == count_tokens(out.text) <= 1500
    assert d["tier_counts"]["ground_truth"] == len(truth) and d["errors"] == []
    # the caller's scopes bound the local reads: a server limited to `default`
    scoped = store.assemble("how does heliograph deploy", config=cfg, scopes=["default"])
    assert scoped.tier_counts["ground_truth"] == 0


def test_without_a_config_one_local_tier_answers(store: Knotwork) -> None:
    out = store.assemble("traefik", max_tokens=800)
    assert out.tier_counts["local"] > 0 and out.total_tokens <= 800
    assert out.results[0].item.source == "kw:note/services/Traefik"
    assert "[services/Traefik.md:" in out.results[0].item.content  # facts cite lines


@pytest.mark.parametrize(("text", "message"), [
    ("[[tiers]]\nname = 'a'\nsources = ['local']\ntopk = 3\n",
     r"knotwork.toml:1 \(tier 'a'\): a tier has unknown key\(s\) topk \(valid: name,"),
    ("[budget]\nmax_tokens = 10\n[[tiers]]\nname = 'a'\nsources = ['local']\n"
     "[[tiers]]\nname = 'b'\nsources = []\n", r"knotwork.toml:6 \(tier 'b'\): sources must"),
    ("[[tiers]]\nname = 'a'\nsources = ['nosuch:x']\n",
     r"knotwork.toml:1 \(tier 'a'\)|unknown source kind 'nosuch'"),
    ("[[tiers]\nname = 'a'\n", r"knotwork.toml: .*line 1"),
    ("[budget]\nmax_tokens = -1\n[[tiers]]\nname = 'a'\nsources = ['local']\n",
     r"knotwork.toml:1: max_tokens must be an integer ≥ 0"),
    ("[budget]\n", r"no \[\[tiers\]\]"),
    ("[[tiers]]\nname = 'a'\nsources = ['qdrant:./data']\n", "write qdrant:PATH#COLLECTION"),
    ("[[tiers]]\nname = 'a'\nsources = ['qdrant:./d#c?embeder=hash']\n",
     r"unknown option\(s\) embeder"),
    ("[[tiers]]\nname = 'a'\nsources = ['http://']\n", "not an http"),
    ("[[tiers]]\nname = 'a'\nsources = [{source = 'memory', items = [{text = 'x'}]}]\n",
     "item 1 needs content"),
    ("[[tiers]]\nname = 'a'\nsources = ['local:scope=a&depth=2']\n",
     r"unknown option\(s\) depth"),
    ("[[tiers]]\nname = 'a'\nsources = ['local']\n[[tiers]]\nname = 'a'\nsources = ['local']\n",
     "two tiers are named 'a'"),
])
def test_config_mistakes_name_the_file_the_line_and_the_fix(tmp_path: Path, text: str,
                                                            message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        cfg = load_config(write(tmp_path / "knotwork.toml", text))
        cfg.open_tiers(SourceEnv(local=lambda q, o: {}))


def test_an_unknown_kind_lists_the_valid_ones(store: Knotwork, tmp_path: Path) -> None:
    cfg = write(tmp_path / "k.toml", "[[tiers]]\nname = 'a'\nsources = ['nosuch:x']\n")
    with pytest.raises(ConfigError) as info:
        store.assemble("q", config=cfg)
    assert "unknown source kind 'nosuch'" in str(info.value)
    assert "local, http, https, qdrant, memory" in str(info.value)


# ---------------------------------------------------------------- plugins


PLUGIN = '''
from knotwork.assemble import Fetched, Item

class Echo:
    def __init__(self, name, word):
        self.name, self.word = name, word

    def fetch(self, query, *, limit, budget):
        return Fetched((Item(f"{self.word}: {query}", f"echo:{self.word}", 0.5),))

def factory(spec, env):
    spec.refuse_unknown([])
    return Echo(spec.name, spec.target)
'''


def install_plugin(root: Path) -> Path:
    """A distribution on ``root`` declaring the kind ``echo`` in ``knotwork.sources``."""
    root.mkdir(parents=True, exist_ok=True)
    write(root / "kw_echo_source.py", PLUGIN)
    info = root / "kw_echo_source-1.0.dist-info"
    info.mkdir()
    write(info / "METADATA", "Metadata-Version: 2.1\nName: kw-echo-source\nVersion: 1.0\n")
    write(info / "entry_points.txt", "[knotwork.sources]\necho = kw_echo_source:factory\n")
    return root


def test_a_source_kind_from_an_entry_point(store: Knotwork, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path / "site")))
    cfg = write(tmp_path / "k.toml", "[[tiers]]\nname = 'p'\nsources = ['echo:hello']\n")
    out = store.assemble("heliograph", config=cfg)
    assert [(r.item.content, r.item.source) for r in out.results] == [
        ("hello: heliograph", "echo:hello")]
    sys.modules.pop("kw_echo_source", None)


# ---------------------------------------------------------------- the CLI


def test_the_cli_prints_the_contract(store: Knotwork, tmp_path: Path) -> None:
    cfg = write(tmp_path / "k.toml", """\
[budget]
max_tokens = 600
[[tiers]]
name = "notes"
sources = ["local", "http://127.0.0.1:9"]
top_k = 3
""")
    db = str(store.store.path)
    result = CliRunner().invoke(app, ["--db", db, "assemble", "traefik", "--config", str(cfg),
                                      "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert set(d) == KEYS and d["tier_counts"] == {"notes": 3}
    assert all(set(r) == ITEM_KEYS for r in d["results"])
    assert d["total_tokens"] <= 600 and d["errors"][0]["source"] == "http://127.0.0.1:9"
    assert "cannot reach" in d["errors"][0]["reason"]
    md = CliRunner().invoke(app, ["--db", db, "assemble", "traefik", "-c", str(cfg),
                                  "--top-k", "notes=1"])
    assert md.exit_code == 0 and md.stdout.startswith("# Context: traefik\n")
    assert md.stdout.count("\n### ") == 1 and "warning: tier notes" in md.stderr
    bad = CliRunner().invoke(app, ["--db", db, "assemble", "q", "-c", str(cfg), "--top-k", "x"])
    assert bad.exit_code == 2
    wrong = write(tmp_path / "w.toml", "[[tiers]]\nname = 'a'\nsources = 'local'\nk = 1\n")
    res = CliRunner().invoke(app, ["--db", db, "assemble", "q", "-c", str(wrong)])
    assert res.exit_code == 2 and "w.toml:1 (tier 'a'): a tier has unknown key(s) k" in res.stderr


def test_a_config_of_remote_sources_needs_no_store(tmp_path: Path) -> None:
    cfg = write(tmp_path / "k.toml", "[[tiers]]\nname = 'm'\nsources = [{source = 'memory',"
                                     " items = [{content = 'Heliograph ships.'}]}]\n")
    db = tmp_path / "none.db"
    res = CliRunner().invoke(app, ["--db", str(db), "assemble", "heliograph", "-c", str(cfg),
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["tier_counts"] == {"m": 1} and not db.exists()
