"""Links of a real Dendron vault: how many reach the note Dendron itself would open.

Reads every note of a Dendron vault (a folder of ``a.b.c.md`` notes with a
``dendron.yml``) by Dendron's own documented link rules, written out here and not taken
from knotwork, then ingests the vault into a temporary store (no embedding) and checks,
for every link whose target note exists, which note knotwork's fact for that link points
at. Dendron's rules (its "Links", "Wiki Link" and "Note Reference" pages):

- ``[[name]]`` opens the note ``name`` (the file ``name.md``); ``[[alias|name]]`` too:
  the label comes first, the note after the bar, blanks around either side dropped.
- ``[[dendron://vault/name]]`` names the note in a vault: the prefix is not the name.
- ``#heading`` and ``#^block`` after the name point into the note, not at another one;
  ``[[#heading]]`` and ``[[#^block]]`` point into the note they stand in.
- ``![[name]]`` embeds the note (a note reference) with the same name rules, plus
  ``#start:#end`` ranges, ``:#*`` up to the next heading and ``,N`` line offsets;
  ``![[name.*]]`` embeds every child (not counted: it names no single note). The older
  ``((ref: [[name]]#heading,1:#*))`` reference holds a plain ``[[name]]``.
- Note names are file names matched without regard to case (Dendron's lookup and its
  link resolution fold case; the docs recommend lower-case names).
- Nothing inside fenced code, inline code or an HTML comment is a link; a wikilink starts
  wherever ``[[`` comes first, so a code span inside its label does not hide it.
- A link to a file that is not a note (``[[assets/x.py]]``) is not counted.
- Tags are links too: ``#foo.bar`` (after a blank or the start of a line, not starting
  with a digit, dot-separated parts of anything but blanks and punctuation) opens the
  note ``tags.foo.bar``, a user tag ``@jane.doe`` opens ``user.jane.doe``, and each
  ``tags:`` entry of the front matter (a string or a list) opens ``tags.<entry>``.

A link counts as *right* when a fact cited on its line (whose supporting text holds the
link) points at the target note's entity, or, when the note states that link first
elsewhere (a fact is stored once), the note has a link fact to the target whose text
names it; *wrong* when the facts on its line point at other notes only; *dangling* when
they point at no note (or there is no fact). Links into the note itself are listed apart
and not counted. Plain-text mentions of a note's name are not link facts. As a check on
the "stated elsewhere" rule, the link facts that no link of their lines names (a link
read as another note, or as no note where every link there names one) are counted too.

    python bench/dendron_links.py VAULT [--show 15] [--dialect NAME] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"(`{3,}|~{3,})")
_PREFIX = re.compile(r"^[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)?")


def _body(line: str) -> str:
    """A line without its indent, quote and list markers (fences nest in lists)."""
    return _PREFIX.sub("", line, count=1)


@dataclass(frozen=True)
class Link:
    note: str  # the note it stands in (file stem)
    line: int  # 1-based line in the file
    text: str  # the link as written, "![[...]]" or "[[...]]"
    form: str  # the shape of the link, e.g. "![[alias|dendron://v/name#h:#*]]"
    target: str  # the note Dendron opens (name as written, lower-cased), "" = this note


def _masked_lines(text: str) -> list[str]:
    """The note's lines with front matter, fenced code and HTML comments blanked."""
    lines = text.split("\n")
    out = list(lines)
    i = 0
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                for k in range(j + 1):
                    out[k] = ""
                i = j + 1
                break
    fence: str | None = None
    comment = False
    for n in range(i, len(lines)):
        line = lines[n]
        if fence is not None:
            out[n] = ""
            stripped = _body(line).strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            continue
        if comment:
            end = line.find("-->")
            if end < 0:
                out[n] = ""
                continue
            out[n] = " " * (end + 3) + line[end + 3:]
            comment = False
            line = out[n]
        m = _FENCE.match(_body(line))
        if m is not None:
            fence = m.group(1)
            out[n] = ""
            continue
        # comments opening on this line
        while True:
            start = line.find("<!--")
            if start < 0:
                break
            end = line.find("-->", start + 4)
            if end < 0:
                line = line[:start]
                comment = True
                break
            line = line[:start] + " " * (end + 3 - start) + line[end + 3:]
        out[n] = line
    return out


def _spans(line: str) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` of each code span (``code``) and wikilink (``link``, from
    ``[[`` to past ``]]``) of a line, left to right the way an inline parser reads them: an
    escaped character is skipped, a code span closes on a run of its own length only."""
    found: list[tuple[str, int, int]] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            close = line.find("`" * run, i + run)
            while close >= 0 and (line[close + run:close + run + 1] == "`"):
                close = line.find("`" * run, close + run + 1)
            if close >= 0:
                found.append(("code", i, close + run))
                i = close + run
                continue
            i += run
            continue
        if line.startswith("[[", i):
            end = line.find("]]", i + 2)
            if end > i + 2:
                found.append(("link", i, end + 2))
                i = end + 2
                continue
        i += 1
    return found


def _inline_links(line: str) -> list[tuple[int, str, bool]]:
    """``(offset, inside, embed)`` for each wikilink of a line (``_spans``)."""
    found: list[tuple[int, str, bool]] = []
    for kind, start, end in _spans(line):
        if kind == "link":
            embed = start > 0 and line[start - 1] == "!"
            found.append((start - 1 if embed else start, line[start + 2:end - 2], embed))
    return found


_TAG_PART = r"[^\s!\"#$%&'()*+,./:;<=>?@\[\\\]^`{|}~]+"
_INLINE_TAG = re.compile(rf"(?<!\S)([#@])(?!\d)({_TAG_PART}(?:\.{_TAG_PART})*)")


def _inline_tags(line: str) -> list[tuple[int, str, str]]:
    """``(offset, symbol, tag)`` for each ``#tag`` and ``@user`` tag of a masked line,
    outside code spans and wikilinks (blanked with a non-blank, so ``]]#anchor`` is no
    tag); a heading's ``#`` marks are no tag."""
    blank = list(line)
    for _, start, end in _spans(line):  # code spans and wikilinks, as _inline_links reads
        blank[start:end] = "\x00" * (end - start)
    text = "".join(blank)
    if re.match(r"\s{0,3}#{1,6}(\s|$)", text):
        text = re.sub(r"^\s{0,3}#{1,6}", lambda m: " " * len(m.group(0)), text)
    return [(m.start(), m.group(1), m.group(2)) for m in _INLINE_TAG.finditer(text)]


def _front_matter_tags(text: str) -> list[tuple[int, str]]:
    """``(line, tag)`` for each entry of the front matter's ``tags:`` key."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return []
    out: list[tuple[int, str]] = []
    in_tags = False
    for n in range(1, len(lines)):
        line = lines[n]
        if line.strip() in ("---", "..."):
            break
        key = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", line)
        if key:
            in_tags = key.group(1) == "tags"
            value = key.group(2).strip()
            if in_tags and value:
                items = value.strip("[]").split(",") if value.startswith("[") else [value]
                out += [(n + 1, t.strip().strip("'\"")) for t in items if t.strip()]
            continue
        item = re.match(r"^\s+-\s*(.+)$", line)
        if in_tags and item:
            out.append((n + 1, item.group(1).strip().strip("'\"")))
    return out


_RANGE = re.compile(r"(,\d+)?(,)?(:#\^?[^#]*)?$")


def _parse(inside: str, embed: bool, legacy: bool) -> tuple[str, str] | None:
    """``(form, target)`` for a wikilink's inside by Dendron's rules; None for a file
    link or a wildcard reference."""
    alias = ""
    value = inside
    if "|" in inside:
        alias, value = inside.split("|", 1)
        alias = alias.removesuffix("\\")
    value = value.strip()
    vault = ""
    m = re.match(r"dendron://[^/]*/", value, re.IGNORECASE)
    if m:
        vault, value = m.group(0), value[m.end():]
    name, hash_, anchor = value.partition("#")
    name = name.strip()
    if "/" in name:  # a file, not a note
        return None
    if embed and name.endswith(".*"):
        return None
    form = ("!" if embed else "") + "[[" + ("alias|" if alias else "")
    form += "dendron://v/" if vault else ""
    form += "name" if name else ""
    if hash_:
        kind = "#^block" if anchor.startswith("^") else "#heading"
        rng = _RANGE.search(anchor)
        tail = ""
        if rng is not None:
            if rng.group(1) or rng.group(2):
                tail += ",N"
            if rng.group(3):
                tail += ":#*" if rng.group(3) == ":#*" else ":#end"
        form += kind + tail
    form += "]]"
    if legacy:
        form = "((ref: " + form + "#...))"
    return form, name.lower()


def dendron_links(vault: Path) -> tuple[list[Link], dict[str, str]]:
    """Every link of every note by Dendron's rules, and the vault's notes by lower-cased
    name (name -> file stem)."""
    notes = {p.stem.lower(): p.stem for p in sorted(vault.glob("*.md"))}
    links: list[Link] = []
    for path in sorted(vault.glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(_masked_lines(text), start=1):
            for offset, inside, embed in _inline_links(line):
                legacy = line[:max(offset, 0)].rstrip().endswith("((ref:")
                parsed = _parse(inside, embed, legacy)
                if parsed is None:
                    continue
                form, target = parsed
                raw = ("!" if embed else "") + "[[" + inside + "]]"
                links.append(Link(path.stem, n, raw, form, target))
            for _, symbol, tag in _inline_tags(line):
                hier = "tags." if symbol == "#" else "user."
                links.append(Link(path.stem, n, symbol + tag,
                                  "#tag" if symbol == "#" else "@user",
                                  (hier + tag).lower()))
        for n, tag in _front_matter_tags(text):
            links.append(Link(path.stem, n, tag, "tags: (front matter)",
                              ("tags." + tag).lower()))
    return links, notes


def measure(vault: Path, show: int = 15, dialect: str = "auto") -> dict[str, object]:
    from knotwork import Knotwork
    from knotwork.errors import NotFound

    links, notes = dendron_links(vault)
    opts = {} if dialect == "auto" else {"dialect": dialect}  # (older code: no setting)
    with tempfile.TemporaryDirectory() as tmp, \
            Knotwork.open(vault, db=str(Path(tmp) / "store.db"), embedder="none",
                          **opts) as kw:
        kw.ingest()
        iri_of: dict[str, str] = {}
        for stem in notes.values():
            try:
                iri_of[stem] = kw.entity(stem).entity.iri
            except NotFound:
                pass
        note_of = {iri: stem for stem, iri in iri_of.items()}
        facts_of: dict[str, list[object]] = {}
        per_form: dict[str, Counter[str]] = defaultdict(Counter)
        wrong: list[dict[str, object]] = []
        skipped: Counter[str] = Counter()
        for link in links:
            if link.target == "" or link.target == link.note.lower():
                skipped["into the note itself"] += 1
                continue
            if link.target not in notes:
                skipped["target note not in the vault"] += 1
                continue
            want = notes[link.target]
            if link.note not in facts_of:
                # facts read from the note's text, but not plain-text mentions of a
                # note's name ("Dendron's" names the note ``dendron``)
                facts_of[link.note] = [x for x in kw.facts(link.note)
                                       if x.value_type == "Entity" and x.source is not None
                                       and x.extractor != "mention"]
            every = facts_of[link.note]
            inner = link.text.lstrip("!")
            here = [x for x in every if x.source.line_start <= link.line <= x.source.line_end
                    and inner in x.source.supporting_text]
            linked = [x for x in every if "[[" in x.source.supporting_text]
            got = {note_of.get(x.value, f"(not a note: {x.value_label})") for x in here}
            # a link already stated higher up in the note has no fact of its own here
            # (a fact is stored once): it is right when the note has a link fact to the
            # target whose text names it
            stated = any(note_of.get(x.value) == want
                         and link.target in x.source.supporting_text.lower() for x in linked)
            if want in got or stated:
                verdict = "right"
            elif any(g in notes.values() for g in got):
                verdict = "wrong"
            else:
                verdict = "dangling"
            per_form[link.form][verdict] += 1
            if verdict != "right" and len(wrong) < show:
                wrong.append({"at": f"{link.note}.md:{link.line}", "link": link.text,
                              "expected": want, "verdict": verdict,
                              "got": sorted(got) or ["(no fact)"]})
        # A link read wrongly leaves a fact no link of its lines names: one pointing at
        # another note, or at no note where every link of those lines names a note. None
        # means the "stated higher up" rule above hides no wrong reading.
        by_note: dict[str, list[Link]] = defaultdict(list)
        for link in links:
            by_note[link.note].append(link)
        stray: list[dict[str, object]] = []
        for note, facts in facts_of.items():
            for x in facts:
                if "[[" not in x.source.supporting_text:
                    continue  # front matter, hierarchy: not read from a link
                span = [lk for lk in by_note[note]
                        if x.source.line_start <= lk.line <= x.source.line_end]
                named = {notes.get(lk.target) for lk in span} | {note}
                got_note = note_of.get(x.value)
                if got_note is not None and got_note not in named or (
                        got_note is None and span
                        and all(lk.target in notes for lk in span)):
                    stray.append({"at": f"{note}.md:{x.source.line_start}",
                                  "points_at": got_note or f"(not a note: {x.value_label})"})
    total = Counter[str]()
    for c in per_form.values():
        total.update(c)
    n = sum(total.values())
    return {
        "notes": len(notes),
        "links": n,
        "right": total["right"], "wrong": total["wrong"], "dangling": total["dangling"],
        "rate": round(total["right"] / n, 4) if n else None,
        "skipped": dict(skipped),
        "forms": {f: dict(c) for f, c in sorted(per_form.items(),
                                                  key=lambda kv: -sum(kv[1].values()))},
        "not_right": wrong,
        "stray_facts": stray[:show], "stray_count": len(stray),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--show", type=int, default=15, help="not-right links to list")
    ap.add_argument("--dialect", default="auto", help="read the vault in this dialect")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out = measure(args.vault, args.show, args.dialect)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    print(f"{out['notes']} notes, {out['links']} links counted, skipped: {out['skipped']}")
    print(f"{'form':<48} {'links':>5} {'right':>5} {'wrong':>5} {'dangl':>5}")
    for form, c in out["forms"].items():  # type: ignore[union-attr]
        print(f"{form:<48} {sum(c.values()):>5} {c.get('right', 0):>5} "
              f"{c.get('wrong', 0):>5} {c.get('dangling', 0):>5}")
    print(f"overall: {out['right']}/{out['links']} right ({out['rate']}), "
          f"{out['wrong']} wrong, {out['dangling']} dangling")
    print(f"link facts no link of their lines names: {out['stray_count']}")
    for w in out["stray_facts"]:  # type: ignore[union-attr]
        print(f"  {w['at']}: points at {w['points_at']}")
    for w in out["not_right"]:  # type: ignore[union-attr]
        print(f"  {w['at']}: {w['link']} -> expected {w['expected']}, "
              f"got {', '.join(w['got'])} ({w['verdict']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
