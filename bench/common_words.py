"""Write ``src/knotwork/ingest/common_words.txt``: the words too common for a one-word name
to be meant wherever it is written (``knotwork.ingest.mentions``). Prints how many.

    python bench/common_words.py            # rewrite the list
    python bench/common_words.py --check    # exit 1 when the list differs from a new one

The source is the ``cl100k_base`` vocabulary shipped inside ``bpe-openai`` (a declared
dependency; MIT): a byte-pair vocabulary whose ranks follow how early a piece was merged,
so how frequent it was in a large body of English web text and code. A word is common
when the vocabulary holds it, lower case and with its leading space (a whole word in
running text), among its first ``--rank`` pieces, and ranks it before its capitalised
form: "data" (828; "Data" 2956), "release", "tags", "logging", "inbox" are words; "London"
(7295 before "london"), "Google", "Windows" are names, and "Kustomize", "Traefik" are not
in it at all. The list is made once and committed, so what a vault mentions does not hang
on the version of a package installed beside it.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import sys
from importlib import resources
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "knotwork" / "ingest" / "common_words.txt"
HEADER = """\
# Words too common for a one-word name to be meant wherever it is written: prose mentions
# a note named by one of them only in the note's own casing, capitalised, and not where a
# sentence starts (knotwork.ingest.mentions). Made by bench/common_words.py from the
# cl100k_base vocabulary of the bpe-openai package (MIT): the lower-case whole words among
# its first {rank} pieces that it ranks before their capitalised form. {count} words.
"""


def ranks() -> dict[str, int]:
    """Each piece of ``cl100k_base`` that is text, with its rank."""
    data = resources.files("bpe_openai.data").joinpath("cl100k_base.tiktoken.gz")
    out = {}
    with gzip.open(str(data), "rt", encoding="ascii") as f:
        for line in f:
            token, rank = line.split()
            try:
                out[base64.b64decode(token).decode("utf-8")] = int(rank)
            except UnicodeDecodeError:
                continue  # a piece of a character, not a word
    return out


def common(rank_limit: int) -> list[str]:
    r = ranks()
    words = []
    for piece, rank in r.items():
        word = piece[1:]
        if (rank < rank_limit and piece.startswith(" ") and len(word) >= 2
                and word.isalpha() and word.islower()
                and r.get(" " + word[0].upper() + word[1:], rank_limit * 10) > rank):
            words.append(word)
    return sorted(set(words))


def render(rank_limit: int) -> str:
    words = common(rank_limit)
    return HEADER.format(rank=f"{rank_limit:,}", count=f"{len(words):,}") + "\n".join(
        words) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rank", type=int, default=30_000)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render(args.rank)
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("the list is current" if same else f"{OUT} differs: run bench/common_words.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"{text.count(chr(10)) - HEADER.count(chr(10))} words -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
