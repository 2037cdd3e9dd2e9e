"""Model extraction benchmark against the scripted chat server: one JSON line of numbers.

    python bench/extract.py                      # synthetic vault, ~1,000 chunks
    python bench/extract.py --notes 500 --latency 0.05
    python bench/extract.py --vault ../shared/datasets/adrs

Runs ``Knotwork.extract`` over a vault with a local OpenAI-compatible server
(``tests/llm/chatserver.py``) standing in for the model, so what is measured is
knotwork's side: calls, tokens (as the server counts them: characters / 4) and seconds
per 1,000 chunks for a cold run; a re-run with nothing changed (the cache: zero calls);
and a re-run after editing one sentence in 1% of the notes (only the edited chunks are
sent). ``--latency`` makes the server wait that long per request, as a model would, to
show what the concurrency limit (``--concurrency``) buys.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.chatserver import ChatServer, rule_responder  # noqa: E402

from knotwork import Knotwork  # noqa: E402

NAMES = ("Kestrel", "Heliograph", "Postgres", "Traefik", "Grafana", "Kota", "Lynx", "Redis",
         "Nginx", "Vault", "Consul", "Loki", "Tempo", "Minio", "Caddy", "Borg")
VERBS = ("uses", "runs on", "depends on", "replaces")
FILLER = ("The team moved it during the spring cleanup after two outages in a row.",
          "Nobody remembers why the first version was written in a weekend.",
          "Its dashboards are linked from the on-call runbook and the wiki.",
          "Backups are taken nightly and kept for thirty days on the second disk.")


def synthetic(root: Path, notes: int, rng: random.Random) -> None:
    for i in range(notes):
        a = f"Svc{i:04d}"
        sections = [f"# {a}\n\n{a} {rng.choice(VERBS)} {rng.choice(NAMES)}."
                    f" {rng.choice(FILLER)}"]
        for h in range(3):
            sections.append(f"## Part {h + 1}\n\n{a} {rng.choice(VERBS)} {rng.choice(NAMES)}."
                            f" {rng.choice(FILLER)} {rng.choice(FILLER)}")
        path = root / f"notes/{i // 100:02d}/{a}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")


def run(kw: Knotwork, root: Path) -> dict[str, Any]:
    t = time.perf_counter()
    r = kw.extract(root)
    seconds = time.perf_counter() - t
    return {"chunks": r.chunks, "sent": r.sent, "cached": r.cached, "calls": r.calls,
            "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
            "facts_added": r.facts_added, "facts_retracted": r.facts_retracted,
            "dropped": r.dropped, "seconds": round(seconds, 3), "stopped": r.stopped}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=250, help="synthetic notes (4 chunks each)")
    ap.add_argument("--vault", type=Path, help="a folder of notes instead")
    ap.add_argument("--latency", type=float, default=0.0, help="server seconds per request")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--edit", type=float, default=0.01, help="share of notes edited")
    args = ap.parse_args()
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="kw-extract-"))
    try:
        root = tmp / "vault"
        if args.vault:
            shutil.copytree(args.vault, root)
        else:
            synthetic(root, args.notes, rng)

        def responder(body: dict[str, Any]) -> dict[str, Any]:
            if args.latency:
                time.sleep(args.latency)
            return rule_responder(body)

        with ChatServer(responder) as server, Knotwork.open(
                root, db=str(tmp / "store.db"), llm_url=server.url, llm_model="bench",
                llm_concurrency=args.concurrency, embedder="none") as kw:
            kw.ingest(root)
            cold = run(kw, root)
            again = run(kw, root)
            files = sorted(root.rglob("*.md"))
            edited = rng.sample(files, max(1, round(len(files) * args.edit)))
            for f in edited:
                lines = f.read_text(encoding="utf-8").split("\n")
                i = next(n for n, line in enumerate(lines) if len(line) > 20)
                lines[i] += " Edited today."
                f.write_text("\n".join(lines), encoding="utf-8")
            after_edit = run(kw, root)
        per_k = 1000 / max(cold["chunks"], 1)
        print(json.dumps({
            "notes": len(files), "chunks": cold["chunks"], "latency_s": args.latency,
            "concurrency": args.concurrency,
            "cold": cold, "per_1000_chunks": {
                "calls": round(cold["calls"] * per_k, 1),
                "tokens": round((cold["prompt_tokens"] + cold["completion_tokens"]) * per_k),
                "seconds": round(cold["seconds"] * per_k, 2)},
            "rerun_unchanged": again, "edited_notes": len(edited), "rerun_after_edit": after_edit,
        }))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
