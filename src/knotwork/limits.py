"""The size limits of every string and list an interface takes, declared once.

The CLI, the Python facade (``knotwork.checks``), MCP and REST refuse the same inputs with
the same numbers, so an agent that learns a limit from one door meets it at every other.
Why limits at all: unbounded text made single calls take minutes (a 10 MB subject took
51 s to assert, a 10 MB search query 19 s) and made every later answer about the entity
as large as what was once asserted onto it.

Lengths are in characters (Unicode code points) for strings and items for lists.
"""

from __future__ import annotations

QUERY_CHARS = 2_000  # a context or search question
REF_CHARS = 1_000  # an entity reference: label, alias, path or IRI
SUBJECT_CHARS = 1_000  # an asserted fact's subject
PREDICATE_CHARS = 200  # a property or relation name
VALUE_CHARS = 10_000  # a literal value, or the name of the entity a fact points to
SUPPORTING_TEXT_CHARS = 10_000  # the words that back a fact or a relation
REASON_CHARS = 1_000  # why a fact was asserted or retracted
DATE_CHARS = 64  # an ISO 8601 date or time
DOC_ID_CHARS = 200  # an agent document's id
TITLE_CHARS = 1_000  # an agent document's title
SOURCE_CHARS = 2_000  # where an agent document came from (a URL, a chat)
RAW_CONTENT_CHARS = 2_000_000  # an agent document's text
NAME_CHARS = 1_000  # an agent entity's name, or a relation's endpoint
TYPE_CHARS = 200  # an entity's type, a relation's type
ENTITIES_MAX = 1_000  # entities in one agent document
RELATIONS_MAX = 2_000  # relations in one agent document
SCOPE_CHARS = 200  # a scope name
SCOPES_MAX = 50  # scopes named in one read
TOKEN_MIN_CHARS = 16  # a bearer token: at least this long, not blank
PAGE_TITLE_CHARS = 500  # a wiki page's title (its category: one of wiki_categories)
PAGE_CONTENT_CHARS = 2_000_000  # a wiki page's Markdown
PAGE_SUMMARY_CHARS = 500  # a wiki page's one-line summary
TIER_CHARS = 200  # an assemble tier's name
PATH_CHARS = 4_096  # a vault path to read from (add-context, extract)
NAMESPACE_CHARS = 200  # add-context's scope prefix
PARSER_CHARS = 100  # add-context's parser name
PATTERNS_MAX = 100  # globs in one add-context call
PATTERN_CHARS = 1_000  # one glob
FACT_IDS_MAX = 10_000  # fact ids in one review decision
SPAN_CHARS = 64  # the audit's since: 7d, 12h or an ISO time
ACTOR_CHARS = 100  # who a REST or MCP-over-HTTP request says it is (the X-Actor header)
WHERE_MAX = 20  # conditions (KEY=VALUE) in one find
FIND_MAX = 500  # entities one find answers with
CHANGES_MAX = 1_000  # document changes one recent_changes answers with
# How far a page may skip (history, the review queue): past SQLite's 64-bit integers an
# offset was a 500 (OverflowError binding it); no store holds a billion facts of one page.
OFFSET_MAX = 1_000_000_000
# Facts one note may state: a note of 100,000 links took 9-17 s to sync; past this, the
# first ones are kept and the note carries a warning (20,000 links: about 2 s).
FACTS_PER_NOTE = 20_000

#: name -> (limit, what it bounds), for the README table and the tests that walk it
ALL: dict[str, tuple[int, str]] = {
    "QUERY_CHARS": (QUERY_CHARS, "context / search query"),
    "REF_CHARS": (REF_CHARS, "entity reference"),
    "SUBJECT_CHARS": (SUBJECT_CHARS, "asserted fact's subject"),
    "PREDICATE_CHARS": (PREDICATE_CHARS, "predicate"),
    "VALUE_CHARS": (VALUE_CHARS, "fact value"),
    "SUPPORTING_TEXT_CHARS": (SUPPORTING_TEXT_CHARS, "supporting text"),
    "REASON_CHARS": (REASON_CHARS, "reason"),
    "DATE_CHARS": (DATE_CHARS, "as_of / valid_at / valid_from / valid_to"),
    "DOC_ID_CHARS": (DOC_ID_CHARS, "agent document id"),
    "TITLE_CHARS": (TITLE_CHARS, "agent document title"),
    "SOURCE_CHARS": (SOURCE_CHARS, "agent document source"),
    "RAW_CONTENT_CHARS": (RAW_CONTENT_CHARS, "agent document text"),
    "NAME_CHARS": (NAME_CHARS, "agent entity name, relation endpoint"),
    "TYPE_CHARS": (TYPE_CHARS, "entity type, relation type"),
    "ENTITIES_MAX": (ENTITIES_MAX, "entities per agent document"),
    "RELATIONS_MAX": (RELATIONS_MAX, "relations per agent document"),
    "SCOPE_CHARS": (SCOPE_CHARS, "scope name"),
    "SCOPES_MAX": (SCOPES_MAX, "scopes per read"),
    "TOKEN_MIN_CHARS": (TOKEN_MIN_CHARS, "bearer token, at least"),
    "PAGE_TITLE_CHARS": (PAGE_TITLE_CHARS, "wiki page title"),
    "PAGE_CONTENT_CHARS": (PAGE_CONTENT_CHARS, "wiki page text"),
    "PAGE_SUMMARY_CHARS": (PAGE_SUMMARY_CHARS, "wiki page summary"),
    "TIER_CHARS": (TIER_CHARS, "assemble tier name"),
    "PATH_CHARS": (PATH_CHARS, "add-context / extract path"),
    "NAMESPACE_CHARS": (NAMESPACE_CHARS, "add-context namespace"),
    "PARSER_CHARS": (PARSER_CHARS, "add-context parser name"),
    "PATTERNS_MAX": (PATTERNS_MAX, "globs per add-context call"),
    "PATTERN_CHARS": (PATTERN_CHARS, "add-context glob"),
    "FACT_IDS_MAX": (FACT_IDS_MAX, "fact ids per review decision"),
    "SPAN_CHARS": (SPAN_CHARS, "audit / recent changes since"),
    "ACTOR_CHARS": (ACTOR_CHARS, "X-Actor header (who a request says it is)"),
    "WHERE_MAX": (WHERE_MAX, "find conditions (KEY=VALUE) per call"),
    "FIND_MAX": (FIND_MAX, "entities one find answers with"),
    "CHANGES_MAX": (CHANGES_MAX, "changes one recent_changes answers with"),
    "OFFSET_MAX": (OFFSET_MAX, "offset of a page (history, review)"),
    "FACTS_PER_NOTE": (FACTS_PER_NOTE, "facts kept from one note file"),
}
