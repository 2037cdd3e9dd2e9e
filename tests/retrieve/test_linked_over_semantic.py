"""An entity reached through a fact is Linked, whatever else found it; vectors alone
need a similarity worth showing (``rank.vector_worth_showing``)."""

from __future__ import annotations

from pathlib import Path

from knotwork import Knotwork


def altair_vault(root: Path) -> Path:
    """A host, two services on it (one says so only in its frontmatter), 14 people."""
    (root / "hosts").mkdir(parents=True)
    (root / "services").mkdir()
    (root / "people").mkdir()
    (root / "hosts" / "node-altair.md").write_text(
        "---\ntype: host\n---\n# node-altair\n\nA rack server in the basement.\n")
    (root / "services" / "Kestrel Queue.md").write_text(
        "---\ntype: service\nruns_on: \"[[node-altair]]\"\n---\n# Kestrel Queue\n\n"
        "The small message queue we wrote in-house.\n")
    (root / "services" / "Grafana.md").write_text(
        "---\ntype: service\n---\n# Grafana\n\nDashboards. Runs on [[node-altair]].\n")
    for i in range(1, 15):
        (root / "people" / f"p{i}.md").write_text(
            f"---\ntype: person\n---\n# Person {i}\n\nPerson {i} likes gardening, chess and"
            f" long walks number {i}.\n")
    return root


def test_a_vector_hit_reached_through_a_fact_is_linked(tmp_path: Path) -> None:
    vault = altair_vault(tmp_path / "v")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="hash") as kw:
        kw.ingest()
        ctx = kw.context("node-altair", max_tokens=0)
        by_label = {e.label: e for e in ctx.entities}
        assert by_label["Kestrel Queue"].relevance == "Linked"
        labels = [e.label for e in ctx.entities]
        # above every unrelated person vectors may still bring
        people = [i for i, e in enumerate(ctx.entities) if e.label.startswith("Person")]
        assert all(labels.index("Kestrel Queue") < i for i in people)
        assert ctx.summary.semantic_hits <= 2  # not the 14 people (each some vector's match)
