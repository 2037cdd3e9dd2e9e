"""API tokens: created with scopes and a read-only flag, kept hashed, listed, revoked.

A secret is 32 random bytes (URL-safe base64, prefixed ``kw_``) shown once, when created;
the store keeps its SHA-256 only, so a copy of the store file gives no one a working
token. A server accepts its own ``--token`` (every right) and every live store token,
each limited to its scopes.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from ..errors import Forbidden, InvalidQuery, NotFound
from ..results import Principal, TokenInfo
from ..store import Store, StoreReader, TokenRecord, record_time

_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def within_scopes(targets: Iterable[str], scopes: Sequence[str]) -> None:
    """``Forbidden`` naming the first of ``targets`` outside ``scopes``: a scoped caller's
    write may land in its own scopes only."""
    outside = sorted(set(targets) - set(scopes))
    if outside:
        raise Forbidden(f"this would write scope {outside[0]!r}, which is not one of"
                        f" {', '.join(scopes)}", scope=outside[0])


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(t: TokenRecord, secret: str | None = None) -> TokenInfo:
    return TokenInfo(id=t.id, name=t.name, scopes=t.scopes, read_only=t.read_only,
                     created_at=t.created_at, revoked_at=t.revoked_at, secret=secret)


def create(store: Store, *, name: str, scopes: Sequence[str], read_only: bool, actor: str
           ) -> TokenInfo:
    """A new token for ``scopes`` (at least one); its secret is in the answer only."""
    scopes = [s.strip() for s in scopes if s.strip()]
    if not scopes:
        raise InvalidQuery("a token needs at least one scope (--scopes a,b)")
    bad = [s for s in scopes if not _SCOPE.match(s)]
    if bad:
        raise InvalidQuery(f"scope {bad[0]!r} is not a scope name (letters, digits, _ . -)")
    if not name.strip():
        raise InvalidQuery("a token needs a name")
    secret = "kw_" + secrets.token_urlsafe(32)
    now = record_time(datetime.now(UTC))
    with store.write(actor=actor) as w:
        tid = w.create_token(name.strip(), secret_hash(secret), scopes=scopes,
                             read_only=read_only, created_at=now)
    return TokenInfo(id=tid, name=name.strip(), scopes=tuple(scopes), read_only=read_only,
                     created_at=now, revoked_at=None, secret=secret)


def listed(reader: StoreReader) -> list[TokenInfo]:
    return [_info(t) for t in reader.tokens()]


def revoke(store: Store, token_id: int, *, actor: str) -> TokenInfo:
    with store.write(actor=actor) as w:
        if not w.revoke_token(token_id, at=record_time(datetime.now(UTC))):
            known = {t.id: t for t in store.reader.tokens()}
            if token_id not in known:
                raise NotFound("token", str(token_id))
    return next(_info(t) for t in store.reader.tokens() if t.id == token_id)


def authenticate(reader: StoreReader, secret: str) -> Principal | None:
    """The principal a live store token's secret names; None for any other text."""
    if not secret.startswith("kw_"):
        return None
    t = reader.token_by_hash(secret_hash(secret))
    if t is None or t.revoked_at is not None:
        return None
    return Principal(name=f"token:{t.name}", scopes=t.scopes, read_only=t.read_only,
                     token_id=t.id)
