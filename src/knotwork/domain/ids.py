"""Every identifier and key the store writes, made in one place.

- ``note_iri``/``name_iri``: the IRIs a note and a link target are known by outside.
- ``note_key``/``entity_key``: the entity keys (``doc:<id>``, ``name:<key>`` and a
  scope's own ``name@<scope>``).
- ``fact_key`` (with ``key_tail``) and ``literal_key``: what a fact says, the identity an
  edit is diffed by (``ownership.diff_facts``).
- ``root_key``: the meta key of the folder a scope's last full sync read.

Each is also spelled in SQL where a migration rewrites stored keys
(``store/sqlite/schema.py`` registers ``name_iri`` and ``entity_key`` as functions), so a
change here is a change of stored data: it needs a migration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from urllib.parse import quote

__all__ = ["DEFAULT_SCOPE", "entity_key", "fact_key", "key_tail", "literal_key", "name_iri",
           "note_iri", "note_key", "root_key"]

DEFAULT_SCOPE = "default"


def note_iri(scope: str, path: str) -> str:
    """The IRI of the note at ``path``: ``kw:note/<path without .md>`` (``kw:<scope>/…``
    outside the default scope), the path percent-quoted but its slashes kept.

    >>> note_iri("default", "ops/Kestrel Queue.md"), note_iri("work", "a.MD")
    ('kw:note/ops/Kestrel%20Queue', 'kw:work/note/a')
    """
    stem = path[:-3] if path.lower().endswith(".md") else path
    prefix = "kw:note/" if scope == DEFAULT_SCOPE else f"kw:{scope}/note/"
    return prefix + quote(stem, safe="/")


def name_iri(key: str, scope: str = DEFAULT_SCOPE) -> str:
    """The IRI of the name entity of ``key`` (a ``words.name_key``) in ``scope``.

    >>> name_iri("kestrel queue"), name_iri("x", "work")
    ('kw:name/kestrel%20queue', 'kw:work/name/x')
    """
    prefix = "kw:name/" if scope == DEFAULT_SCOPE else f"kw:{scope}/name/"
    return prefix + quote(key, safe="/")


def note_key(doc_id: int) -> str:
    """The entity key of the note of the document ``doc_id``: ``doc:<id>``."""
    return f"doc:{doc_id}"


def entity_key(scope: str, ref: str) -> str:
    """The entity key of a name reference (``name:<key>``) written in ``scope``.

    Each scope has its own name entities, so a link resolves to a note of its own scope
    only (with one entity per name, a link in one scope resolved to another's note).
    The default scope keeps the plain key, as stores written before scopes had their own.

    >>> entity_key("default", "name:x"), entity_key("work", "name:x"), entity_key("w", "doc:1")
    ('name:x', 'name@work\\x1fx', 'doc:1')
    """
    if scope == DEFAULT_SCOPE or not ref.startswith("name:"):
        return ref
    return f"name@{scope}\x1f{ref[5:]}"


def literal_key(datatype: str, value: str) -> str:
    """The object key of a literal value: ``lit:<datatype>:<value>``."""
    return f"lit:{datatype}:{value}"


def key_tail(valid_from: str | None, valid_to: str | None,
             qualifiers: Sequence[tuple[str, str]]) -> str:
    """A fact's valid time and qualifiers, joined for ``fact_key``."""
    return "\x1f".join([valid_from or "", valid_to or "", *(f"{k}={v}" for k, v in qualifiers)])


def fact_key(subject_key: str, predicate: str, object_key: str, tail: str) -> str:
    """What a fact says, hashed: the identity edits are diffed by (never its position).

    ``tail`` is its valid time and qualifiers, joined by ``key_tail``."""
    text = f"{subject_key}\x1f{predicate}\x1f{object_key}\x1f{tail}"
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def root_key(scope: str) -> str:
    """The store's meta key holding the folder a scope's last full sync read."""
    return f"vault_root:{scope}"
