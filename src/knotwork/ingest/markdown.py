"""Parse one Markdown note: bytes in, a ``ParsedDocument`` (or a fatal ``Issue``) out.

One pass over the lines classifies each as blank, prose, heading or code (fenced or
indented) and masks what must never yield structure: inline code spans, HTML comments
``<!-- -->`` and Obsidian comments ``%% %%`` (both may span lines). Masking replaces a
character by ``\\x00`` (and list/quote markers by spaces), one for one, so every offset
found later is an offset into the file's own line. Headings cut the text into chunks;
prose lines are grouped into blocks for ``extract``.

>>> doc = parse_markdown("ops/Traefik.md", b"# Traefik\\nIt runs on [[kota]].\\n")
>>> [(f.predicate, f.object.text) for f in doc.facts]
[('runs_on', 'kota')]
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from types import MappingProxyType

from ..types import ChunkDraft, Issue, NameDecl, NameKind, ParsedDocument, Span, name_key
from . import extraction_key
from .dialects import current as current_dialect
from .extract import Block, extract_facts, opening_identifier
from .frontmatter import Entry, Frontmatter, read_frontmatter
from .hierarchy import hierarchy_facts, hierarchy_names
from .lexicon import normalize_key
from .links import reference_label
from .sources import content_hash
from .validity import apply_validity

BLANK, TEXT, HEADING, CODE, RULE = range(5)
_BINARY_SNIFF = 8192
# Facts one note may state (``knotwork.limits.FACTS_PER_NOTE`` says the same number; the
# parser imports nothing but types and errors): past it the first ones are kept.
FACTS_PER_NOTE = 20_000

# ATX heading "## Title ##": 1-6 "#" then a blank or the line end ("#tag" is no heading).
_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)[ \t]*")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
# Setext underline "===" / "---" under a one-line paragraph.
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
# Fence opener, also inside block quotes ("> ```") and list items (any indent).
_FENCE = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})(.*)")
_QUOTE = re.compile(r"(?:[ \t]*>[ \t]?)+")
_LIST = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
# A task box "[ ]", "[x]" or any one-character Obsidian status such as "[-]" or "[/]".
_TASK = re.compile(r"\[[^\[\]]\](?:[ \t]+|$)")
_SPECIAL = re.compile(r"`+|<!--|%%")
_HIDDEN = "\x00 \t"  # what a line that is all comment holds once masked
# A link reference definition "[label]: destination" (not a footnote "[^1]: text"): no
# prose; it makes "[label]" in prose a link (so "- [label] text" is no observation).
REF_DEF = re.compile(r" {0,3}\[([^\]^][^\]]*)\]:[ \t]*(<[^<>\n]*>|\S+)")


@lru_cache(maxsize=16)
def _closing_ticks(n: int) -> re.Pattern[str]:
    """A code span closes with a backtick run of exactly the opening length."""
    return re.compile(rf"(?<!`)`{{{n}}}(?!`)")


def mask_inline(line: str, state: int) -> tuple[str, int]:
    """Mask code spans and comments in ``line``; ``state`` carries an open comment.

    ``state`` is 0 (none), 1 (inside ``<!--``) or 2 (inside ``%%``); the returned state
    is the one the next line starts in.
    """
    if not state and "`" not in line and "<!--" not in line and "%%" not in line:
        return line, 0
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if state:
            closer = "-->" if state == 1 else "%%"
            j = line.find(closer, i)
            stop = n if j < 0 else j + len(closer)
            out.append("\x00" * (stop - i))
            i, state = stop, (state if j < 0 else 0)
            continue
        m = _SPECIAL.search(line, i)
        if m is None:
            out.append(line[i:])
            break
        out.append(line[i:m.start()])
        token = m.group()
        if token in ("<!--", "%%"):
            state = 1 if token == "<!--" else 2
            out.append("\x00" * len(token))
            i = m.end()
            continue
        close = _closing_ticks(len(token)).search(line, m.end())
        if close is None:  # an unmatched backtick run is literal text
            out.append(token)
            i = m.end()
        else:
            out.append("\x00" * (close.end() - m.start()))
            i = close.end()
    return "".join(out), state


@dataclass(slots=True)
class ScannedLine:
    """One body line as classified: its kind and, for prose, the masked text."""

    kind: int
    masked: str = ""
    content: int = 0
    level: int = 0
    heading: str = ""
    list_item: bool = False
    task: bool = False
    table: bool = False


# Blank and code lines carry nothing but their kind: share one instance of each.
_BLANK_LINE = ScannedLine(BLANK)
_CODE_LINE = ScannedLine(CODE)


def _indent(line: str) -> int:
    """Leading width with tabs to the next multiple of four, as CommonMark counts it."""
    width = 0
    for c in line:
        if c == " ":
            width += 1
        elif c == "\t":
            width += 4 - width % 4
        else:
            break
    return width


@dataclass(slots=True)
class _Scanner:
    """The line classifier's state between lines."""

    fence: str = ""  # the opening fence run while inside a fenced block
    comment: int = 0
    indented: bool = False
    list_ctx: bool = False
    after_break: bool = True  # previous line blank, a heading, a fence or the start
    prev_raw: str = ""  # the last prose line, for a Setext heading's text
    references: dict[str, str] = field(default_factory=dict)  # label -> destination
    out: list[ScannedLine] = field(default_factory=list)
    hidden: list[int] = field(default_factory=list)  # offsets of lines that are all comment

    def scan(self, lines: Sequence[str], start: int) -> list[ScannedLine]:
        for raw in lines[start:]:
            self.out.append(self.line(raw))
        return self.out

    def line(self, raw: str) -> ScannedLine:
        """Classify one line; the order of the checks is the order of precedence."""
        if self.fence:
            return self.in_fence(raw)
        if self.comment:  # a comment left open masks on; no block syntax inside it
            masked, self.comment = mask_inline(raw, self.comment)
            self.after_break = False
            if not masked.strip(_HIDDEN):
                self.hidden.append(len(self.out))
            return self.keep(ScannedLine(TEXT, masked), raw)
        if not raw:  # an empty line, the most common blank one
            self.after_break = True
            return _BLANK_LINE
        if raw[:1].isalpha():  # most prose: no block syntax starts with a letter
            self.indented = False
            if "`" in raw or "<!--" in raw or "%%" in raw:
                masked, self.comment = mask_inline(raw, 0)
            else:  # mask_inline's own shortcut, without the call
                masked, self.comment = raw, 0
            if self.after_break:
                self.list_ctx = False  # a paragraph after a blank line ends the list
            self.after_break, self.prev_raw = False, raw
            return ScannedLine(TEXT, masked)
        lead = raw.lstrip(" \t")
        if not lead or lead.isspace():
            self.after_break = True
            return _BLANK_LINE
        indent = len(raw) - len(lead)
        if indent and "\t" in raw[:indent]:
            indent = _indent(raw)
        if self.indented and indent >= 4:
            return _CODE_LINE
        self.indented = False
        if indent >= 4 and self.after_break and not self.list_ctx:
            self.indented = True  # an indented code block, not a list continuation
            return _CODE_LINE
        first = lead[0]
        if first in "`~>" and self.opens_fence(raw, indent):
            return _CODE_LINE
        return self.keep(self.prose(raw, first, indent), raw)

    def keep(self, line: ScannedLine, raw: str) -> ScannedLine:
        """Remember ``raw`` as the last prose line (a Setext underline may follow)."""
        self.prev_raw = raw
        return line

    def opens_fence(self, raw: str, indent: int) -> bool:
        """Enter a fenced block if ``raw`` opens one."""
        fence = _FENCE.match(raw)
        # "```js```" on one line is inline code: a backtick fence's info has no backtick.
        if fence is None or (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            return False
        self.fence, self.after_break = fence.group(1), False
        if indent == 0:  # a fence at the margin ends any list before it
            self.list_ctx = False
        return True

    def in_fence(self, raw: str) -> ScannedLine:
        """Inside a fence until a run of the same character, at least as long, alone."""
        stripped = raw.strip().lstrip(">").strip()
        char = self.fence[0]
        if len(stripped) >= len(self.fence) and stripped == char * len(stripped):
            self.fence, self.after_break = "", True
        return _CODE_LINE

    def prose(self, raw: str, first: str, indent: int) -> ScannedLine:
        """Classify a line that is neither blank nor code: heading, rule or text."""
        masked, self.comment = mask_inline(raw, 0)
        heading = _ATX.match(masked) if first == "#" and indent < 4 else None
        if heading:
            self.list_ctx, self.after_break = False, True
            text = _ATX_CLOSE.sub("", raw[heading.end():]).strip()
            content = heading.end()
            return ScannedLine(HEADING, " " * content + masked[content:], content,
                               len(heading.group(1)), text)
        if first in "=-" and self.setext(raw):
            return ScannedLine(RULE)
        if first == "[" and (ref := REF_DEF.match(raw)):
            # the first definition of a label counts (CommonMark)
            self.references.setdefault(reference_label(ref.group(1)), ref.group(2))
            self.after_break = False
            return ScannedLine(RULE)
        if first in "<%" and not masked.strip(_HIDDEN):
            self.hidden.append(len(self.out))
        line = self.structure(raw, masked, first, indent)
        self.after_break = False
        return line

    def structure(self, raw: str, masked: str, first: str, indent: int) -> ScannedLine:
        """Classify list items, tasks, quotes and table rows; blank their markers."""
        content = 0
        if first == ">":
            quote = _QUOTE.match(raw)
            content = quote.end() if quote else 0
            first = raw[content:content + 1]
        item = _LIST.match(raw, content) if first in "-*+" or first.isdigit() else None
        task = False
        if item:
            content = item.end()
            box = _TASK.match(raw, content) if raw.startswith("[", content) else None
            if box:
                task, content = True, box.end()
            self.list_ctx = True
        elif indent == 0 and self.after_break:
            self.list_ctx = False  # a paragraph after a blank line ends the list
        table = first == "|" and not item
        if content:
            masked = " " * content + masked[content:]
        return ScannedLine(TEXT, masked, content, list_item=bool(item), task=task, table=table)

    def setext(self, raw: str) -> bool:
        """Turn the previous one-line paragraph into a heading if ``raw`` underlines it."""
        m = _SETEXT.match(raw)
        if not m or self.after_break or not self.out:
            return False
        prev = self.out[-1]
        before = self.out[-2].kind if len(self.out) > 1 else BLANK
        if prev.kind != TEXT or prev.list_item or prev.table or prev.content:
            return False
        if before not in (BLANK, HEADING, CODE, RULE):
            return False
        prev.kind, prev.level = HEADING, 1 if m.group(1)[0] == "=" else 2
        prev.heading = self.prev_raw.strip()
        self.after_break = True
        return True


def scan_body(lines: Sequence[str], start: int
              ) -> tuple[list[ScannedLine], Mapping[str, str], frozenset[int]]:
    """Classify ``lines[start:]`` (aligned with them); also the link reference definitions
    (label, as ``reference_label`` folds it -> destination) and the lines that are all
    comment (0-based indices into ``lines``: nothing on them is shown to a reader)."""
    scanner = _Scanner()
    scanned = scanner.scan(lines, start)
    return (scanned, MappingProxyType(scanner.references),
            frozenset(start + k for k in scanner.hidden))


def blocks_of(lines: Sequence[str], start: int, scanned: list[ScannedLine]) -> list[Block]:
    """Group prose lines into blocks: paragraphs, list items, headings, table rows."""
    blocks: list[Block] = []
    current: Block | None = None
    prev_table = False
    for offset, line in enumerate(scanned):
        if line.kind not in (TEXT, HEADING):
            current = None
            continue
        number = start + offset + 1
        joins = (current is not None and line.kind == TEXT and not line.list_item
                 and not line.table and not prev_table)
        if joins and current is not None:
            current.masked.append(line.masked)
            current.raw.append(lines[number - 1])
        else:
            current = Block(number, [line.masked], [lines[number - 1]], line.content,
                            line.list_item, line.task, line.table, line.level)
            blocks.append(current)
        if line.kind == HEADING:
            current = None
        prev_table = line.table
    return blocks


# ---------------------------------------------------------------- chunks


def build_chunks(
    lines: Sequence[str], start: int, scanned: list[ScannedLine], chunk_tokens: int,
    hidden: frozenset[int] = frozenset()
) -> tuple[ChunkDraft, ...]:
    """Cut the body at headings; split long sections at paragraphs, then at lines."""
    budget = max(1, chunk_tokens) * 4  # tokens estimated as characters / 4
    prefix = list(accumulate((len(line) + 1 for line in lines), initial=0))
    chunker = _Chunker(lines, start, scanned, budget, prefix, hidden)
    return chunker.chunks()


@dataclass(slots=True)
class _Chunker:
    """Section the body at headings; ``prefix`` makes any line range's size O(1)."""

    lines: Sequence[str]
    start: int
    scanned: list[ScannedLine]
    budget: int
    prefix: list[int]
    hidden: frozenset[int]  # lines that are all comment (``scan_body``)
    out: list[ChunkDraft] = field(default_factory=list)

    def size(self, a: int, b: int) -> int:
        """Characters of lines ``a..b`` (0-based, inclusive) joined by "\\n"."""
        return self.prefix[b + 1] - self.prefix[a] - 1

    def chunks(self) -> tuple[ChunkDraft, ...]:
        """Walk the headings, keeping the stack of open ones as the heading path."""
        stack: list[tuple[int, str]] = []
        section_start = self.start
        path: tuple[str, ...] = ()
        for offset, line in enumerate(self.scanned):
            if line.kind != HEADING:
                continue
            index = self.start + offset
            # A heading whose section is empty ("## Routing" then "### Routers") joins the
            # chunk of the deeper heading after it: a chunk of one heading line is noise.
            # So does a run of them ("## Proposal", "### User Stories", "#### Story 1"):
            # the headings between are the ones joined already.
            bare = bool(stack) and (stack[-1][0] < line.level and section_start >= self.start
                    and self.scanned[section_start - self.start].kind == HEADING
                    and all(self.empty(i) or self.scanned[i - self.start].kind == HEADING
                            for i in range(section_start + 1, index)))
            if not bare:
                self.section(section_start, index - 1, path)
            while stack and stack[-1][0] >= line.level:
                stack.pop()
            stack.append((line.level, line.heading))
            path = tuple(text for _, text in stack)
            if not bare:
                section_start = index
        self.section(section_start, len(self.lines) - 1, path)
        return tuple(self.out)

    def only_headings(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are headings with nothing under them but blanks and
        comments, and no link, tag or field in them (no fact can cite such a chunk).

        Why: a template's section left as it came ("###### Will enabling this feature
        result in new API types?" over only the template's comment, in the Kubernetes
        KEPs) is a chunk that answers nothing yet is searched, embedded and matched. A
        section left empty without a comment stays a chunk, as a note that is only its
        title does: the author wrote that heading alone.
        """
        scanned, start = self.scanned, self.start
        for i in range(a, b + 1):
            line = scanned[i - start]
            if line.kind == HEADING:
                text = line.masked[line.content:]
                if "[" in text or "#" in text or "::" in text:
                    return False
            elif not self.empty(i):
                return False
        return True

    def empty(self, i: int) -> bool:
        """A line with nothing a reader sees: blank, or all comment (``<!-- -->``, ``%%``).

        Why comments: they are the author's notes, hidden when the page is shown, and no
        fact comes from them. Every Kubernetes KEP opens with 60 lines of the template's
        instructions in one comment: up to four chunks a KEP, alike in each, that matched
        questions about KEPs better than the KEPs did. A comment inside a paragraph stays
        in its chunk (a chunk's text is its lines as the file has them).
        """
        return not self.lines[i].strip() or i in self.hidden

    def blank(self, i: int) -> bool:
        """An empty line outside fenced code (where blank lines are content); a comment
        line never is code."""
        if self.lines[i].strip():
            return i in self.hidden
        return self.scanned[i - self.start].kind != CODE

    def trimmed(self, a: int, b: int) -> tuple[int, int]:
        """Lines ``a..b`` without empty lines at either end (``a > b`` when none are left)."""
        lines, hidden = self.lines, self.hidden  # ``empty``, inlined: called per section
        while a <= b and (not lines[a].strip() or a in hidden):
            a += 1
        while b >= a and (not lines[b].strip() or b in hidden):
            b -= 1
        return a, b

    def section(self, a: int, b: int, path: tuple[str, ...]) -> None:
        """Emit lines ``a..b`` as one chunk, or as pieces when over the budget; a section
        of headings over nothing but comments is none (``only_headings``)."""
        commented = bool(self.hidden) and any(i in self.hidden for i in range(a, b + 1))
        a, b = self.trimmed(a, b)
        if a > b or (commented and self.only_headings(a, b)):
            return
        if self.size(a, b) <= self.budget:
            self.emit(a, b, path)
            return
        for pa, pb in self.pieces(a, b):
            self.emit(pa, pb, path)

    def pieces(self, a: int, b: int) -> list[tuple[int, int]]:
        """Pack paragraphs (fenced code kept whole) into pieces under the budget; one too
        big alone is packed line by line, with what precedes and follows it."""
        units: list[tuple[int, int]] = []
        for ua, ub in self.units(a, b):
            if self.size(ua, ub) <= self.budget:
                units.append((ua, ub))
            else:
                units.extend((i, i) for i in range(ua, ub + 1))
        return self.pack(units)

    def pack(self, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Greedy runs of ``units`` (line ranges in order) under the budget (a unit over it
        stands alone); a last run under a quarter of the budget takes units from the run
        before it while both stay under the budget.

        Why: the greedy cut alone left what did not fit as a chunk of its own, a line or
        two: "custom controller." cut from its list item (in 1.6% of the Kubernetes
        KEPs' chunks), a link definition whose URL's words then matched a question better
        than any whole paragraph (a short chunk is favoured by BM25's length norm).
        """
        runs: list[list[tuple[int, int]]] = []
        for unit in units:
            if runs and self.size(runs[-1][0][0], unit[1]) <= self.budget:
                runs[-1].append(unit)
            else:
                runs.append([unit])
        if len(runs) > 1:
            before, last = runs[-2], runs[-1]
            while (len(before) > 1 and self.size(last[0][0], last[-1][1]) < self.budget // 4
                   and self.size(before[-1][0], last[-1][1]) <= self.budget):
                last.insert(0, before.pop())
        return [(run[0][0], run[-1][1]) for run in runs]

    def units(self, a: int, b: int) -> list[tuple[int, int]]:
        """Paragraphs: runs of lines between blank lines (a fence's blank lines inside)."""
        units: list[tuple[int, int]] = []
        ua: int | None = None
        for i in range(a, b + 1):
            if self.blank(i):
                if ua is not None:
                    units.append((ua, i - 1))
                ua = None
            elif ua is None:
                ua = i
        if ua is not None:
            units.append((ua, b))
        return units

    def emit(self, a: int, b: int, path: tuple[str, ...]) -> None:
        """Append lines ``a..b`` (0-based) minus blank edges; their text is the file's."""
        a, b = self.trimmed(a, b)
        if a > b:
            return
        text = "\n".join(self.lines[a:b + 1])
        # One line over ``CUT_AFTER`` budgets (a minified blob, a document written as one
        # line) is cut at blanks into pieces of a budget that all cite that line: one
        # chunk of megabytes was returned whole by every search and embedded by its first
        # words only. Why not every line over one budget: a paragraph written as one line
        # (a scientific abstract) then became two or three chunks scored apart, and
        # SciFact's nDCG@10 fell from 0.695 to 0.678 with BM25; past four budgets 26
        # abstracts were still cut, and hybrid gave 0.7395 instead of 0.7408
        # (bench/README.md). Past eight, 2 are: a paragraph, not a blob.
        # Each piece keeps the column it starts at: a fact cites the piece holding its text.
        cut = a == b and len(text) > CUT_AFTER * self.budget
        for column, piece in _cut(text, self.budget) if cut else ((0, text),):
            self.out.append(ChunkDraft(len(self.out), path, piece, Span(a + 1, b + 1),
                                       column))


CUT_AFTER = 8  # a line is cut into chunks when longer than this many chunk budgets


def _cut(text: str, budget: int) -> list[tuple[int, str]]:
    """``text`` in pieces of at most ``budget`` characters, each ending at a blank when
    one lies in its second half, with the offset each starts at in ``text``; the blanks
    between pieces are dropped."""
    out: list[tuple[int, str]] = []
    pos = 0  # where the rest, ``text``, starts in the text given
    while len(text) > budget:
        at = text.rfind(" ", budget // 2, budget + 1)
        head, rest = (text[:at], text[at + 1:]) if at > 0 else (text[:budget], text[budget:])
        if head.strip():
            out.append((pos, head.rstrip()))
        rest = rest.lstrip()
        pos += len(text) - len(rest)  # the rest is a suffix of what was left
        text = rest
    if text.strip() or not out:
        out.append((pos, text))
    return out


# ---------------------------------------------------------------- the entry point


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only (a CRLF is one break; no other character ends a line)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def decode(path: str, data: bytes, max_bytes: int) -> str | Issue:
    """Return the text without a BOM, or the fatal issue that keeps the file out.

    UTF-8 (with or without a BOM) and UTF-16 or UTF-32 with a BOM are read (Windows
    editors save "Unicode" as UTF-16 LE with a BOM; it was refused as binary). One NUL rule
    for the whole file: text has no NUL, so a NUL anywhere (after decoding) keeps the file
    out, with its line. Before, one in the first 8 KB refused the file and one after it
    was stored silently.
    """
    if len(data) > max_bytes:
        return Issue(path, f"file too large: {len(data)} bytes > limit {max_bytes}")
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError as exc:
                return Issue(path, f"invalid {codec.upper()} at byte {exc.start + len(bom)}")
            return _no_nul(path, text)
    at = data.find(b"\x00")
    if at >= 0:
        if at < _BINARY_SNIFF:
            return Issue(path, "binary file")
        return Issue(path, f"binary file: a NUL byte at byte {at}", data.count(b"\n", 0, at) + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Issue(path, f"invalid UTF-8 at byte {exc.start}", line)
    return text[1:] if text.startswith("\ufeff") else text


# Byte-order marks, the longer first (UTF-32 LE's starts with UTF-16 LE's).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _no_nul(path: str, text: str) -> str | Issue:
    at = text.find("\x00")
    if at < 0:
        return text
    return Issue(path, f"binary file: a NUL character at character {at}",
                 text.count("\n", 0, at) + 1)


def leading_h1(scanned: Sequence[ScannedLine], hidden: frozenset[int] = frozenset(),
               start: int = 0) -> str:
    """The text of a level-1 heading that opens the body, else "".

    Why: in a docs tree (ADRs, RFCs, BEIR-style passages) the opening "# Title" is the
    document's name; a frontmatter ``title`` still wins, and the file stem stays a name.
    Comments before it are not content: every Kubernetes KEP opens with the template's
    instructions in ``<!-- -->`` and only then says "# KEP-2322: Suspend Jobs".
    """
    for k, line in enumerate(scanned):
        if line.kind == BLANK or start + k in hidden:  # (``hidden``: ``scan_body``'s)
            continue
        return line.heading if line.kind == HEADING and line.level == 1 else ""
    return ""


def _names(path: str, entries: Sequence[Entry], h1: str = ""
           ) -> tuple[str, str, tuple[NameDecl, ...]]:
    """Return ``(title, doc_type, names)``; names are deduplicated by key, path first."""
    bare = path[:-3] if path.lower().endswith(".md") else path
    stem = posixpath.basename(bare)
    title, doc_type, aliases = "", "note", []
    for entry in entries:
        canon = normalize_key(entry.key)
        if canon == "title" and not title and _scalar(entry.value):
            title = str(entry.value).strip()
        elif canon == "type" and doc_type == "note":
            doc_type = _doc_type(entry.value) or doc_type
        elif canon == "aliases":
            values = entry.value if isinstance(entry.value, list) else [entry.value]
            aliases += [str(v).strip() for v in values if _scalar(v) and str(v).strip()]
    title = title or h1
    candidates: list[tuple[str, NameKind]] = [(bare, "path"), (stem, "stem")]
    if title:
        candidates.append((title, "title"))
        # the identifier a title opens with ("KEP-3017: Unhealthy Pod Eviction"): other
        # notes cite the note by it, and every Kubernetes KEP is a file named README.md
        opening = opening_identifier(title)
        if opening is not None and opening[1]:
            candidates.append((opening[0], "alias"))
    candidates += [(alias, "alias") for alias in aliases]
    names: dict[str, NameDecl] = {}
    for text, kind in candidates:
        key = name_key(text)
        if key and key not in names:
            names[key] = NameDecl(key, text, kind)
    return title or _folder_label(bare, stem), doc_type, tuple(names.values())


# File names a docs tree gives a folder's own page (GitHub, Hugo, MkDocs, Docusaurus).
_FOLDER_PAGES = frozenset({"readme", "index", "_index"})


def _folder_label(bare: str, stem: str) -> str:
    """An untitled note's label: its stem, or for a folder's page its folder's name.

    Why: ``keps/sig-apps/2232-suspend-jobs/README.md`` is the page of
    ``2232-suspend-jobs``; 38 KEPs all labelled "README" told an answer's reader
    nothing. Only the label: the folder's name is not made a name links resolve by, so no
    link that resolved before changes its target.
    """
    if stem.casefold() in _FOLDER_PAGES and "/" in bare:
        return posixpath.basename(posixpath.dirname(bare))
    return stem


def _scalar(value: object) -> bool:
    """A value that can be a title or an alias (not a mapping or a list)."""
    return value is not None and not isinstance(value, dict | list)


def _doc_type(value: object) -> str | None:
    """The note type: a string (``[[Person]]`` → ``Person``), or a list's first string."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str)), None)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|")[0].strip()
    return text or None


def parse_markdown(
    path: str, data: bytes, *, max_bytes: int = 5_000_000, chunk_tokens: int = 220
) -> ParsedDocument | Issue:
    """Parse a Markdown note into names, chunks and fact drafts, or a fatal ``Issue``.

    ``path`` is the vault-relative POSIX path; it names the note and anchors relative
    links. Problems that do not stop the note (malformed frontmatter, a link escaping
    the vault) come back as non-fatal issues on the document.
    """
    read = read_markdown(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)
    return read if isinstance(read, Issue) else read.document


@dataclass(frozen=True, slots=True)
class MarkdownRead:
    """A note as ``parse_markdown`` read it, and the reading itself: its lines, its
    frontmatter, each body line classified (``scan_body``) and the lines all comment.

    Why: a typed parser (an RFC's, an ADR's) reads the same lines again for its own
    fields; given these it does not split, read the frontmatter and classify every line
    a second time (a third of the parse of a design document).
    """

    document: ParsedDocument
    lines: list[str]
    front: Frontmatter
    scanned: list[ScannedLine]
    hidden: frozenset[int]


def read_markdown(
    path: str, data: bytes, *, max_bytes: int = 5_000_000, chunk_tokens: int = 220
) -> MarkdownRead | Issue:
    """``parse_markdown``, with the reading it made the document of (``MarkdownRead``)."""
    text = decode(path, data, max_bytes)
    if isinstance(text, Issue):
        return text
    lines = split_lines(text) if text else []
    front = read_frontmatter(path, lines)
    scanned, references, hidden = scan_body(lines, front.body_start)
    chunks = build_chunks(lines, front.body_start, scanned, chunk_tokens, hidden)
    blocks = blocks_of(lines, front.body_start, scanned)
    facts, issues = extract_facts(path, front.entries, blocks, references)
    if len(facts) > FACTS_PER_NOTE:
        issues = (*issues, Issue(path, f"the note states {len(facts):,} facts; the first"
                                 f" {FACTS_PER_NOTE:,} are kept (the limit that keeps"
                                 " one file's work bounded)", fatal=False))
        facts = facts[:FACTS_PER_NOTE]
    facts, dated = apply_validity(path, facts)
    issues = issues + dated
    title, doc_type, names = _names(path, front.entries,
                                    leading_h1(scanned, hidden, front.body_start))
    dialect = current_dialect()
    if dialect != "markdown":  # a name that states structure (Dendron's dots)
        facts += tuple(f for f in hierarchy_facts(path, dialect, front.entries,
                                                  lines[0] if lines else "")
                       if f not in facts)
        known = {n.key for n in names}
        names += tuple(n for n in hierarchy_names(path, dialect) if n.key not in known)
    return MarkdownRead(ParsedDocument(
        path=path,
        text=text,
        content_hash=content_hash(data),
        title=title,
        doc_type=doc_type,
        names=names,
        chunks=chunks,
        facts=facts,
        issues=front.issues + issues,
        size=len(data),
        extraction=extraction_key(chunk_tokens),
    ), lines, front, scanned, hidden)
