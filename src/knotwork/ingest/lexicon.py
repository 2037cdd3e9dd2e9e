"""Map what authors write, in English, German, Italian, French or Spanish, to one predicate.

Two tables, both plain data so configuration can extend them:

* ``KEY_SYNONYMS``: frontmatter and inline-field keys (``ruolo``, ``Rolle``, ``rôle`` →
  ``role``). Keys are looked up case-folded, accent-free, with spaces and dashes as ``_``.
* ``RELATION_PATTERNS``: per language, ``(phrase, predicate)`` pairs for the phrase that
  sits right before a link (``läuft auf [[kota]]`` → ``runs_on``). A phrase is literal
  words with ``{a,b}`` alternatives; matching is case-insensitive, word-bounded and
  blind to the kind of whitespace and apostrophe.

Why words and not one big regex: a regex alternation of ~150 phrases anchored at the
end is searched from every position of the text and cost ~60 µs per link; looking up
the last few words in a dict costs ~2 µs. The table is compiled once, lazily, and again
only after ``register_relation`` changed it.

>>> normalize_key("Ruolo"), normalize_relation("hängt ab von"), infer_relation("it runs on the ")
('role', 'depends_on', 'runs_on')
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

KEY_SYNONYMS: dict[str, tuple[str, ...]] = {
    "role": ("role", "ruolo", "rolle", "rôle", "rol"),
    "team": ("team", "squadra", "équipe", "equipo", "gruppo", "groupe", "grupo"),
    "owner": ("owner", "owners", "proprietario", "eigentümer", "besitzer", "propriétaire",
              "propietario", "responsabile", "verantwortlich", "verantwortlicher",
              "responsable"),
    "status": ("status", "stato", "zustand", "statut", "estado"),
    "date": ("date", "datum", "data", "fecha"),
    "author": ("author", "autor", "autore", "auteur", "verfasser"),
    "description": ("description", "beschreibung", "descrizione", "descripción"),
    "created": ("created", "erstellt", "creato", "créé", "creado", "created_at"),
    "updated": ("updated", "aktualisiert", "aggiornato", "mis_à_jour", "actualizado",
                "modified", "updated_at"),
    "depends_on": ("depends_on", "dipende_da", "abhängig_von", "hängt_ab_von", "dépend_de",
                   "depende_de", "dependencies", "abhängigkeiten", "dipendenze",
                   "dépendances", "dependencias"),
    "part_of": ("part_of", "parte_di", "teil_von", "fait_partie_de", "parte_de",
                "forma_parte_de", "gehört_zu", "belongs_to"),
    # a list item's "- use [[X]]" names the relation type, as "- uses [[X]]" does
    "uses": ("uses", "use"),
    "runs_on": ("runs_on", "gira_su", "läuft_auf", "tourne_sur", "se_ejecuta_en", "hosted_on"),
    "located_at": ("located_at", "location", "ort", "standort", "luogo", "sede", "lieu",
                   "ubicación", "ubicacion", "located_in"),
    "tags": ("tags", "tag", "schlagworte", "schlagwörter", "etichette", "etichetta",
             "étiquettes", "étiquette", "etiquetas", "etiqueta"),
    "aliases": ("aliases", "alias", "aliase", "alias_list", "pseudonyme", "pseudonimi"),
    "title": ("title", "titel", "titolo", "titre", "título"),
    "superseded_by": ("superseded_by", "replaced_by", "ersetzt_durch", "abgelöst_durch",
                      "sostituito_da", "remplacé_par", "reemplazado_por", "sustituido_por"),
    "type": ("type", "typ", "tipo"),
}

# Each language: (phrase, predicate). A phrase is literal words; "{a,b}" spells
# alternatives ("dipende {da,dal}" is two phrases). Order does not matter: the longest
# phrase that ends the text before a link wins, so "is part of" beats "part of".
RELATION_PATTERNS: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("{runs,running,run} on", "runs_on"), ("{is,are} {hosted,deployed} on", "runs_on"),
        ("{hosted,deployed} on", "runs_on"),
        ("{depends,depend,relies,rely} on", "depends_on"), ("is dependent on", "depends_on"),
        ("{works,work,collaborates} with", "works_with"),
        ("{reports,report} to", "reports_to"),
        ("{is,are} part of", "part_of"), ("part of", "part_of"), ("belongs to", "part_of"),
        ("owns", "owns"), ("{replaces,supersedes}", "replaces"),
        # the passive says the link is the newer one ("Superseded by [[ADR-7]]")
        ("{superseded,replaced} by", "superseded_by"),
        ("{is,was,has been} {superseded,replaced} by", "superseded_by"),
        # A bare "use" is most often an instruction ("Use [[X]] to …", "please use",
        # "you can use"): the reader uses X, not the note. "We use", "we will use" (an
        # ADR's decision) and the like say the note's authors do.
        ("uses", "uses"), ("{we,they,i} {use,also use,will use,shall use}", "uses"),
        ("{we'll,they'll,i'll} use", "uses"), ("is built on", "uses"),
        ("{is,are} located {in,at}", "located_at"), ("located {in,at}", "located_at"),
        ("see also", "links_to"), ("see", "links_to"),
    ],
    "de": [
        ("{läuft,laufen} auf", "runs_on"), ("ist gehostet auf", "runs_on"),
        ("{hängt,hängen} von", "depends_on"), ("{hängt,hängen} ab von", "depends_on"),
        ("{ist,sind} abhängig von", "depends_on"), ("abhängig von", "depends_on"),
        ("{arbeitet,arbeiten} mit", "works_with"), ("berichtet an", "reports_to"),
        ("ist teil {von,der,des}", "part_of"), ("teil von", "part_of"),
        ("{gehört,gehören} {zu,zum,zur}", "part_of"),
        ("besitzt", "owns"), ("ersetzt", "replaces"),
        ("{ersetzt,abgelöst} durch", "superseded_by"),
        ("{nutzt,nutzen,benutzt,benutzen,verwendet,verwenden}", "uses"),
        ("befindet sich {in,im}", "located_at"),
        ("siehe auch", "links_to"), ("siehe", "links_to"),
    ],
    "it": [
        ("gira {su,sul,sulla}", "runs_on"), ("è {ospitato,ospitata} {su,sul,sulla}", "runs_on"),
        ("dipende {da,dal,dallo,dalla,dai,dagli,dalle,dall'}", "depends_on"),
        ("lavora {con,col}", "works_with"),
        ("riporta {a,al,allo,alla,ai,agli,alle,all'}", "reports_to"),
        ("fa parte {di,del,dello,della,dei,degli,delle,dell'}", "part_of"),
        ("possiede", "owns"), ("sostituisce", "replaces"), ("{usa,utilizza}", "uses"),
        ("{sostituito,sostituita,rimpiazzato,rimpiazzata} da", "superseded_by"),
        ("si trova {a,in,nel,nella}", "located_at"),
        ("vedi anche", "links_to"), ("vedi", "links_to"),
    ],
    "fr": [
        ("{tourne,fonctionne} sur", "runs_on"), ("est {hébergé,hébergée} sur", "runs_on"),
        ("dépend {de,du,des,d'}", "depends_on"), ("travaille avec", "works_with"),
        ("rend compte {à,au}", "reports_to"), ("fait partie {de,du,des,d'}", "part_of"),
        ("possède", "owns"), ("remplace", "replaces"), ("utilise", "uses"),
        ("{remplacé,remplacée} par", "superseded_by"),
        ("se trouve {à,au,en,dans}", "located_at"),
        ("est {situé,située} {à,au,en,dans}", "located_at"),
        ("voir aussi", "links_to"), ("voir", "links_to"),
    ],
    "es": [
        ("se ejecuta en", "runs_on"), ("corre en", "runs_on"),
        ("está {alojado,alojada} en", "runs_on"),
        ("depende {de,del}", "depends_on"), ("trabaja con", "works_with"),
        ("reporta {a,al}", "reports_to"), ("forma parte {de,del}", "part_of"),
        ("es dueño de", "owns"), ("{reemplaza,sustituye}", "replaces"),
        ("{reemplazado,reemplazada,sustituido,sustituida} por", "superseded_by"),
        ("{usa,utiliza}", "uses"),
        ("se encuentra en", "located_at"), ("está {ubicado,ubicada} en", "located_at"),
        ("ver también", "links_to"),
    ],
}

# Articles and determiners allowed between a relation phrase and its link
# ("runs on the [[kota]] host", "läuft auf dem [[kota]]", "gira su l'[[host]]").
DETERMINERS: frozenset[str] = frozenset({
    "the", "a", "an", "our", "its", "their", "this", "that", "my",
    "der", "die", "das", "dem", "den", "des", "ein", "eine", "einem", "einer", "einen",
    "unserem", "unserer", "il", "lo", "la", "l'", "i", "gli", "le", "un", "una", "uno",
    "un'", "les", "une", "notre", "el", "los", "las", "nuestro", "nuestra",
})

# Markup and quotes that may sit around a phrase ("runs on **[[kota]]**", "„[[kota]]").
_JUNK = " \t\n\r*_\"“”„«»‹›(\x00"
_WINDOW = 80  # a relation phrase sits right before its link: look no further back
_K = TypeVar("_K")
_V = TypeVar("_V")


def _fold(text: str) -> str:
    """Case-fold, drop accents, turn spaces and dashes into ``_`` (the lookup form)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\s\-]+", "_", plain.strip()).strip("_")


def _key_table(synonyms: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Each synonym (and canonical key) in its lookup form → the canonical key."""
    return {_fold(syn): canon for canon, syns in synonyms.items() for syn in (canon, *syns)}


# camelCase boundary ("dueDate" → "due_Date") before lower snake casing.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Anything but a unicode letter or digit becomes one "_" ("Runs On", "kep-number").
_NON_WORD = re.compile(r"[\W_]+")


def snake_case(text: str) -> str:
    """Lower snake case that keeps unicode letters: ``"Runs On"`` → ``"runs_on"``."""
    return _NON_WORD.sub("_", _CAMEL.sub("_", text.strip())).strip("_").lower()


@lru_cache(maxsize=8192)
def normalize_key(key: str) -> str:
    """Return the canonical predicate for a frontmatter or inline-field key.

    Known keys in any of the five languages map to one predicate so that notes written
    in different languages describe the same relation; unknown keys become lower snake
    case (``"Runs On"`` → ``"runs_on"``, ``"kep-number"`` → ``"kep_number"``).
    """
    canon = known_key(key)
    return canon if canon is not None else snake_case(key)


@lru_cache(maxsize=4096)
def known_key(key: str) -> str | None:
    """The canonical predicate of ``key`` when the table knows it (in any language), else
    None: ``"Stato"`` → ``"status"``, ``"Feature Name"`` → None."""
    folded = _fold(key)
    keys = LEXICON.keys
    return keys.get(folded) or keys.get(_fold(snake_case(key)))


@lru_cache(maxsize=1)
def _first_words() -> frozenset[str]:
    """The first word of every key the table knows, in its lookup form."""
    return frozenset(folded.split("_", 1)[0] for folded in LEXICON.keys)


def may_be_key(text: str) -> bool:
    """A cheap test before ``known_key`` on text that is rarely a key (a heading): whether
    its first word opens one of the table's keys.

    Why: ``known_key`` folds its text (Unicode decomposition, two expressions), ~10 µs for
    a text it has not seen, and a vault's headings are nearly all new to it.
    """
    head = text.split(None, 1)
    if not head:
        return False
    word = head[0].strip("*_:.#").casefold()
    if not word.isascii():
        word = _fold(word)
    return word.split("-", 1)[0] in _first_words()


@dataclass(frozen=True, slots=True)
class LexiconState:
    """What ``Lexicon.snapshot`` saw, for ``Lexicon.restore``."""

    keys: dict[str, str]
    patterns: dict[str, list[tuple[str, str]]]
    taught: tuple[tuple[str, ...], ...]


class Lexicon:
    """The tables the parser reads keys and relation phrases with, and what a program
    taught them.

    The parser reads the process's one instance, ``LEXICON``; its tables are the module's
    ``KEY_SYNONYMS`` (folded into a lookup table), ``RELATION_PATTERNS`` and the
    compiled forms the module caches. Teach it through its methods (or the module's
    ``register_key`` and ``register_relation``, which are its): each clears exactly the
    caches its change makes stale, and records what it taught, which is part of the key
    a document's facts were extracted under (``knotwork.ingest.extraction_key``), so
    notes read before are read again.
    """

    __slots__ = ("keys", "patterns", "_taught")

    def __init__(self, keys: dict[str, str], patterns: dict[str, list[tuple[str, str]]]
                 ) -> None:
        self.keys = keys  # folded key → canonical predicate
        self.patterns = patterns  # language → (phrase, predicate) pairs
        self._taught: list[tuple[str, ...]] = []

    def registered(self) -> tuple[tuple[str, ...], ...]:
        """The keys and relation phrases registered in this process, in order."""
        return tuple(self._taught)

    def register_key(self, canonical: str, *synonyms: str) -> None:
        """Teach ``normalize_key`` more synonyms for ``canonical``."""
        for syn in (canonical, *synonyms):
            self.keys[_fold(syn)] = canonical
        self._taught.append(("key", canonical, *synonyms))
        self._changed(keys=True)

    def register_relation(self, lang: str, pattern: str, predicate: str) -> None:
        """Add a relation phrase (literal words, ``{a,b}`` alternatives) for ``lang``."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", predicate):
            raise ValueError(f"predicate must be lower snake case: {predicate!r}")
        self.patterns.setdefault(lang, []).append((pattern, predicate))
        self._taught.append(("relation", lang, pattern, predicate))
        self._changed(keys=False)

    def snapshot(self) -> LexiconState:
        """What the tables hold now (copies), to ``restore`` later."""
        return LexiconState(dict(self.keys),
                            {lang: list(pairs) for lang, pairs in self.patterns.items()},
                            tuple(self._taught))

    def restore(self, state: LexiconState) -> None:
        """Forget everything taught since ``state`` was taken."""
        self.keys.clear()
        self.keys.update(state.keys)
        self.patterns.clear()
        self.patterns.update({lang: list(pairs) for lang, pairs in state.patterns.items()})
        self._taught[:] = state.taught
        self._changed(keys=True)

    def _changed(self, *, keys: bool) -> None:
        if keys:
            normalize_key.cache_clear()
            known_key.cache_clear()
            _first_words.cache_clear()
        _phrase_table.cache_clear()  # (after a key too: its memo of normalize_relation)


LEXICON = Lexicon(_key_table(KEY_SYNONYMS), RELATION_PATTERNS)
registered = LEXICON.registered
register_key = LEXICON.register_key
register_relation = LEXICON.register_relation


# "{a,b}" alternatives inside a phrase.
_ALTERNATIVES = re.compile(r"\{([^{}]*)\}")


def expand(phrase: str) -> list[str]:
    """Spell out ``{a,b}`` alternatives: ``"gira {su,sul}"`` → ``["gira su", "gira sul"]``."""
    m = _ALTERNATIVES.search(phrase)
    if m is None:
        return [phrase]
    head, tail = phrase[:m.start()], phrase[m.end():]
    return [x for alt in m.group(1).split(",") for x in expand(head + alt.strip() + tail)]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.replace("’", "'").casefold().split())


_MEMO_SIZE = 4096  # memo entries kept per table before starting over


@dataclass(slots=True)
class _Phrases:
    """The compiled phrase table, and memos of answers that hold as long as it does.

    The memos live here so that rebuilding the table (``_phrase_table.cache_clear()``,
    as ``register_relation`` does) can never leave a stale answer behind.
    """

    table: dict[tuple[str, ...], str]  # case-folded words → predicate (those that can match)
    lasts: frozenset[str]  # the phrases' last words
    longest: int  # most words in a phrase
    # _match_tail's answers by (window, cut, exact); "" for none (no predicate is empty)
    tails: dict[tuple[str, bool, bool], str] = field(default_factory=dict)
    relations: dict[str, str] = field(default_factory=dict)  # normalize_relation's answers


@lru_cache(maxsize=1)
def _phrase_table() -> _Phrases:
    """Every phrase as case-folded words → predicate; the phrases' last words; most words.

    Built on first use and again after ``register_relation`` (or ``register_key``, for
    the memo of ``normalize_relation``) cleared the cache.
    """
    table: dict[tuple[str, ...], str] = {}
    for pairs in LEXICON.patterns.values():
        for pattern, predicate in pairs:
            for phrase in expand(pattern):
                table.setdefault(_words(phrase), predicate)
    lasts = frozenset(words[-1] for words in table)
    longest = max(map(len, table), default=0)
    # A phrase with a part that is no word (a registered "is-a") can never match: leave it
    # out of the lookup, so a hit needs no check, but keep its words in lasts and longest.
    matchable = {words: p for words, p in table.items() if all(map(_is_word, words))}
    return _Phrases(matchable, lasts, longest)


def _remember(memo: dict[_K, _V], key: _K, value: _V) -> _V:
    """Store ``value`` in a bounded memo: a full one starts over rather than grow."""
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = value
    return value


def _is_word(part: str) -> bool:
    """A word of a phrase: letters and digits, an apostrophe allowed ("dall'")."""
    return part.replace("'", "").isalnum()


def _strip_quote(text: str) -> str:
    """Drop a quote before the link ("uses '[[X]]'") but keep an elision ("dall'[[X]]")."""
    if text[-1:] in ("'", "’") and (len(text) == 1 or not text[-2].isalpha()):
        return text[:-1].rstrip(_JUNK)
    return text


def _match_tail(text: str, *, exact: bool) -> str | None:
    """Find the relation phrase ending ``text`` (or filling it, when ``exact``).

    The text is cut into whitespace-separated parts from the end; the longest run of
    trailing words (optionally followed by one determiner) that spells a known phrase
    wins. Markup and quotes around the phrase are ignored; a phrase must start at a
    word boundary ("(runs on" matches, "reruns on" does not).

    Only the last ``_WINDOW`` characters (and whether there were more) decide, so the
    answer is memoised on those: the text between two links (" and uses ") and a list
    item's phrase ("depends_on") repeat across a vault.
    """
    phrases = _phrase_table()
    stripped = _strip_quote(text.rstrip(_JUNK))
    if exact:
        stripped = stripped.lstrip(_JUNK)
    key = (stripped[-_WINDOW:], len(stripped) > _WINDOW, exact)
    found = phrases.tails.get(key)  # one lookup: another thread may clear the memo
    if found is None:
        found = _remember(phrases.tails, key, _match_window(phrases, *key) or "")
    return found or None


def _match_window(phrases: _Phrases, window: str, cut: bool, exact: bool) -> str | None:
    """``_match_tail`` on the stripped text's last characters; ``cut``: there were more.

    Most links follow no relation, so a last word that ends no phrase is rejected first.
    """
    table, lasts, longest = phrases.table, phrases.lasts, phrases.longest
    last = window.rsplit(None, 1)
    if not last:
        return None
    word = last[-1].replace("’", "'").casefold()
    if word not in lasts and word not in DETERMINERS and word.lstrip(_JUNK) not in lasts:
        return None  # the common case: no phrase ends here
    # Folding the window at once splits as folding each part would: no character folds
    # into or out of whitespace.
    parts = window.replace("’", "'").casefold().rsplit(None, longest + 1)
    if len(parts) > longest + 1 or cut:
        if exact:
            return None
        parts = parts[1:]  # the remainder, or a word the window may have cut
    if not parts:
        return None
    tails = []
    if parts[-1] in lasts:
        tails.append(parts)
    if len(parts) > 1 and parts[-1] in DETERMINERS and parts[-2] in lasts:
        tails.append(parts[:-1])
    for words in tails:
        top = len(words)
        for k in (top,) if exact else range(min(top, longest), 0, -1):
            candidate = (words[-k].lstrip(_JUNK), *words[top - k + 1:])
            found = table.get(candidate)
            if found is not None:
                return found
    return None


def infer_relation(text_before_link: str) -> str | None:
    """Return the predicate whose phrase ends ``text_before_link``, else None.

    >>> infer_relation("Der Dienst läuft auf dem "), infer_relation("see the docs ")
    ('runs_on', None)
    """
    return _match_tail(text_before_link, exact=False)


def exact_relation(text: str) -> str | None:
    """Return the predicate if ``text`` is nothing but a relation phrase (plus markup)."""
    return _match_tail(text, exact=True)


def normalize_relation(phrase: str) -> str:
    """Return the predicate for a list-item relation phrase (``- depends on [[X]]``).

    ``depends on``, ``depends_on``, ``hängt ab von`` and ``dipende da`` all give
    ``depends_on``; an unknown phrase becomes lower snake case. Memoised: a vault writes
    the same few phrases over and over.
    """
    memo = _phrase_table().relations
    found = memo.get(phrase)
    return found if found is not None else _remember(memo, phrase, _relation(phrase))


def _relation(phrase: str) -> str:
    """``normalize_relation`` unmemoised."""
    spaced = re.sub(r"[_\-\s]+", " ", phrase).strip()
    found = exact_relation(spaced)
    if found is not None:
        return found
    canon = LEXICON.keys.get(_fold(spaced))
    return canon if canon is not None else snake_case(spaced)
