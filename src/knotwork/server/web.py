"""The web page at ``/``: search, an entity's page, the review queue, all server-rendered.

Plain HTML and one inline stylesheet, nothing fetched from anywhere else, so it works
offline and behind any proxy. Every control is a link, a form or a button (keyboard
usable; ``/`` focuses the search box), and the layout folds to one column on a phone.
It sits behind the same token rule as the API (``server.auth``): a locked server sends
the browser to a sign-in form whose token is kept in a ``SameSite=Strict`` cookie, and a
scoped token sees its scopes only.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Annotated
from urllib.parse import parse_qs, quote, urlsplit

import anyio.to_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .. import limits as L
from ..core import Knotwork
from ..errors import KnotworkError, NotFound
from ..types import FactRow
from . import auth

router = APIRouter(include_in_schema=False)

_CSS = """
*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;
background:#fafafa}header{background:#23395d;color:#fff;padding:.6rem 1rem;display:flex;
flex-wrap:wrap;gap:1rem;align-items:center}header a{color:#fff}main{max-width:60rem;
margin:auto;padding:1rem}a{color:#1a4f9c}a:focus,button:focus,input:focus{outline:3px solid
#f5a623;outline-offset:2px}.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;
background:#fff;color:#000;padding:.3rem}form.search{display:flex;gap:.5rem}input[type=search],
input[type=text],input[type=password]{flex:1;font:inherit;padding:.4rem;min-width:0}
button{font:inherit;padding:.3rem .8rem;cursor:pointer}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem;border-bottom:1px solid #ddd;vertical-align:top}
.dim{color:#666;font-size:.9em}blockquote{margin:.2rem 0;padding-left:.6rem;
border-left:3px solid #ccc;color:#444}.badge{display:inline-block;padding:0 .4rem;
border-radius:.6rem;font-size:.8em;background:#e3e8f0}.rejected{background:#f6d5d5}
.unreviewed{background:#fbefc7}.approved{background:#d7efd9}form.inline{display:inline}
@media (max-width:40rem){table,thead,tbody,tr,th,td{display:block}thead{display:none}
td{border:0;padding:.1rem 0}tr{border-bottom:1px solid #ccc;padding:.5rem 0}}
"""
_KEYS = """document.addEventListener('keydown',function(e){var t=e.target.tagName;
if(e.key==='/'&&t!=='INPUT'&&t!=='TEXTAREA'){var q=document.getElementById('q');
if(q){e.preventDefault();q.focus();}}});"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: str, *, q: str = "", status: int = 200) -> HTMLResponse:
    doc = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · knotwork</title><style>{_CSS}</style></head><body>
<a class="skip" href="#main">Skip to content</a>
<header><strong><a href="/">knotwork</a></strong><nav><a href="/">Search</a> ·
<a href="/ui/review">Review queue</a></nav>
<form class="search" role="search" action="/" method="get" style="flex:1">
<label for="q" class="skip">Search</label>
<input id="q" type="search" name="q" value="{_e(q)}" placeholder="Search (press /)"
 aria-label="Search the notes"><button type="submit">Search</button></form></header>
<main id="main" tabindex="-1"><h1>{_e(title)}</h1>{body}</main>
<script>{_KEYS}</script></body></html>"""
    return HTMLResponse(doc, status_code=status)


def _entity_link(ref: str, label: str) -> str:
    return f'<a href="/ui/entity?ref={quote(ref, safe="")}">{_e(label)}</a>'


def _value(f: FactRow) -> str:
    if f.value_type == "Entity":
        return _entity_link(f.value, f.value_label or f.value)
    return _e(f.value)


def _cite(f: FactRow) -> str:
    if f.source is None or not f.source.path:
        return f'<span class="dim">asserted by {_e(f.actor or "?")}</span>'
    s = f.source
    lines = f"{s.line_start}" if s.line_start == s.line_end else f"{s.line_start}-{s.line_end}"
    return f"<code>{_e(s.path)}:{lines}</code>"


def _state(f: FactRow) -> str:
    return (f'<span class="badge">{_e(f.trust)}</span> '
            f'<span class="badge {_e(f.review)}">{_e(f.review)}</span>')


def _decide_buttons(f: FactRow, back: str) -> str:
    if f.retracted_at is not None:
        return ""
    out = []
    for decision, label, status in (("approve", "Approve", "approved"),
                                    ("reject", "Reject", "rejected")):
        if f.review != status:
            out.append(
                f'<form class="inline" method="post" action="/ui/review">'
                f'<input type="hidden" name="fact_id" value="{f.id}">'
                f'<input type="hidden" name="decision" value="{decision}">'
                f'<input type="hidden" name="next" value="{_e(back)}">'
                f'<button type="submit" aria-label="{label} fact {f.id}">{label}</button>'
                f"</form>")
    return " ".join(out)


def _fact_rows(facts: Iterable[FactRow], back: str, *, subject: bool = False,
               decide: bool = True) -> str:
    rows = []
    for f in facts:
        evidence = (f"<blockquote>{_e(' '.join(f.source.supporting_text.split())[:400])}"
                    "</blockquote>" if f.source and f.source.supporting_text else "")
        valid = (f'<div class="dim">valid {_e(f.valid_from or "…")} – {_e(f.valid_to or "…")}'
                 "</div>" if f.valid_from or f.valid_to else "")
        gone = (f'<div class="dim">retracted {_e(f.retracted_at)}'
                f' ({_e(f.retract_reason or "")})</div>' if f.retracted_at else "")
        who = (_entity_link(f.subject_iri, f.subject_label) + " " if subject else "")
        rows.append(
            f'<tr id="fact-{f.id}" data-fact="{f.id}" data-review="{_e(f.review)}">'
            f"<td>{who}<strong>{_e(f.predicate)}</strong></td><td>{_value(f)}{valid}{gone}</td>"
            f"<td>{_state(f)} <span class=\"dim\">{f.confidence:.2f}</span></td>"
            f"<td>{_cite(f)}{evidence}</td>"
            f"<td>{_decide_buttons(f, back) if decide else ''}</td></tr>")
    if not rows:
        return '<p class="dim">None.</p>'
    return ("<table><thead><tr><th>Fact</th><th>Value</th><th>Trust · confidence</th>"
            "<th>Citation · evidence</th><th>Review</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _kw(request: Request) -> Knotwork:
    kw: Knotwork = request.app.state.kw
    return kw


@router.get("/", response_class=HTMLResponse)
def home(request: Request, q: Annotated[str, Query(max_length=2000)] = "") -> Response:
    """Search: the entities a query names, then the passages that match it."""
    kw, scopes = _kw(request), auth.read_scopes(request, None)
    if not q.strip():
        return _page("Search the notes", '<p>Type what you are looking for above; press '
                     '<kbd>/</kbd> to get there. <a href="/ui/review">Review queue</a>.</p>')
    ctx = kw.context(q, max_entities=10, link_depth=0, max_tokens=0, scopes=scopes,
                     evidence=False)
    hits = kw.search(q, k=10, scopes=scopes)
    ents = "".join(
        f"<li>{_entity_link(e.iri, e.label)} <span class='dim'>{_e(', '.join(e.types))}"
        f" · {len(e.facts)} facts</span></li>" for e in ctx.entities)
    passages = "".join(
        f"<li><a href=\"/ui/entity?ref={quote(h.path, safe='')}\">{_e(h.title)}</a>"
        f" <code>{_e(h.path)}:{h.line_start}-{h.line_end}</code>"
        f"<blockquote>{_e(' '.join(h.text.split())[:300])}</blockquote></li>" for h in hits)
    body = (f'<h2>Entities</h2><ul class="entities">{ents or "<li>None.</li>"}</ul>'
            f'<h2>Passages</h2><ul class="passages">{passages or "<li>None.</li>"}</ul>')
    return _page(f"Results for “{q}”", body, q=q)


@router.get("/ui/entity", response_class=HTMLResponse)
def entity_page(request: Request, ref: Annotated[str, Query(min_length=1)]) -> Response:
    """One entity: its facts with trust, confidence, citation and evidence, its
    neighbours, and its history."""
    kw, scopes = _kw(request), auth.read_scopes(request, None)
    try:
        view = kw.entity(ref, scopes=scopes)
        past = kw.history(ref, scopes=scopes, limit=200)
    except NotFound as exc:
        return _page("Not found", f"<p>{_e(exc)}</p>", status=404)
    back = f"/ui/entity?ref={quote(ref, safe='')}"
    e = view.entity
    neighbours = {f.value: f.value_label or f.value for f in view.facts
                  if f.value_type == "Entity"}
    neighbours.update({f.subject_iri: f.subject_label for f in view.incoming})
    near = "".join(f"<li>{_entity_link(iri, label)}</li>" for iri, label in neighbours.items())
    retracted = [f for f in past.facts if f.retracted_at is not None or f.review == "rejected"]
    events = "".join(
        f"<li><span class=\"dim\">{_e(ev['at'])}</span> {_e(ev['actor'])} {_e(ev['action'])}"
        f" #{_e(ev['fact_id'])}{(' — ' + _e(ev['reason'])) if ev.get('reason') else ''}</li>"
        for ev in past.events)
    body = (f'<p class="dim"><code>{_e(e.iri)}</code> · {_e(", ".join([e.kind, *view.types]))}'
            f" · scope {_e(e.scope)}</p><h2>Facts</h2>{_fact_rows(view.facts, back)}"
            f"<h2>Neighbours</h2><ul>{near or '<li>None.</li>'}</ul>"
            f"<h2>Referenced by</h2>{_fact_rows(view.incoming, back, subject=True)}"
            f"<h2>History</h2><p class=\"dim\">{past.total_facts} facts ever recorded;"
            f" retracted or rejected:</p>{_fact_rows(retracted, back, decide=False)}"
            f"<h3>Events</h3><ul>{events or '<li>None.</li>'}</ul>")
    return _page(e.label, body)


@router.get("/ui/review", response_class=HTMLResponse)
def review_page(request: Request,
                status: Annotated[str, Query(pattern="^(unreviewed|approved|rejected)$")]
                = "unreviewed",
                offset: Annotated[int, Query(ge=0, le=L.OFFSET_MAX)] = 0) -> Response:
    """The review queue, 50 facts a page, each with its evidence and its decisions."""
    kw = _kw(request)
    page = kw.review_queue(status=[status], scopes=auth.read_scopes(request, None),
                           limit=50, offset=offset)
    back = f"/ui/review?status={status}&offset={offset}"
    current = ' aria-current="page"'
    tabs = " · ".join(f'<a href="/ui/review?status={s}"{current if s == status else ""}>{s}</a>'
                      for s in ("unreviewed", "approved", "rejected"))
    more = (f'<p><a href="/ui/review?status={status}&offset={page.next_offset}">Next page</a>'
            "</p>" if page.next_offset is not None else "")
    body = (f"<p>{tabs}</p><p>{page.total} {_e(status)} facts.</p>"
            f"{_fact_rows(page.facts, back, subject=True)}{more}")
    return _page("Review queue", body)


def _local(target: str) -> str:
    """A redirect target on this site only (never another host)."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/"):
        return "/ui/review"
    return target


def _same_origin(request: Request) -> bool:
    """Whether a form was posted from this site's own pages. Why: a server nobody locked
    takes a form from any page the browser shows, so another site could post one to
    127.0.0.1 (a browser names the posting page's origin, which must be this one)."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return True  # not a browser's cross-site post (those say where they come from)
    return urlsplit(origin).netloc == request.headers.get("host", "")


@router.post("/ui/review")
async def review_form(request: Request) -> Response:
    """Approve or reject one fact from a form; back to the page it came from."""
    if not _same_origin(request):
        return _page("Refused", "<p>This form was posted from another site.</p>",
                     status=403)
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8")).items()}
    kw = _kw(request)
    back = _local(form.get("next", "/ui/review"))
    try:
        fact_id = int(form.get("fact_id", ""))
        scopes = auth.read_scopes(request, None)
        p = auth.principal(request)
        await anyio.to_thread.run_sync(lambda: kw.review(
            form.get("decision", ""), [fact_id], scopes=scopes,
            reason=form.get("reason") or None,
            reviewer=p.name if p.name != "server" else "web:server"))
    except (ValueError, KnotworkError) as exc:
        return _page("Not done", f"<p>{_e(exc)}</p><p><a href=\"{_e(back)}\">Back</a></p>",
                     status=400 if isinstance(exc, ValueError) else 404
                     if isinstance(exc, NotFound) else 409)
    return RedirectResponse(f"{back}#fact-{fact_id}", status_code=303)


@router.get("/ui/login", response_class=HTMLResponse)
def login_page() -> Response:
    body = ('<form method="post" action="/ui/login"><p><label for="token">Token</label> '
            '<input id="token" type="password" name="token" autocomplete="current-password" '
            'required autofocus> <button type="submit">Sign in</button></p></form>')
    return _page("Sign in", body)


@router.post("/ui/login")
async def login(request: Request) -> Response:
    """Keep the token in a cookie only this site's own pages send."""
    if not _same_origin(request):
        return _page("Refused", "<p>This form was posted from another site.</p>",
                     status=403)
    form = parse_qs((await request.body()).decode("utf-8"))
    token = (form.get("token") or [""])[0].strip()
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(auth.COOKIE, token, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response
