"""The API reference at ``/docs``: every route of the OpenAPI spec, rendered on the server.

Why not FastAPI's pages: its ``/docs`` (Swagger UI) and ``/redoc`` load their scripts and
styles from a CDN, so with no network, or behind a proxy that blocks it, they were blank.
This page is plain HTML made from ``app.openapi()`` with the web page's stylesheet
(``server.web``): nothing is fetched from anywhere, and it is the same spec
``/openapi.json`` serves. Each route shows its method and path, what it does, its
parameters and body fields with their types, limits and defaults, and what it answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from .web import _CSS, _e

router = APIRouter(include_in_schema=False)

Schema = Mapping[str, Any]
_METHODS = ("get", "post", "put", "patch", "delete")
# rules a schema may carry, and how the page says them
_RULES = (("minLength", "at least {} characters"), ("maxLength", "at most {} characters"),
          ("minimum", "≥ {}"), ("exclusiveMinimum", "> {}"), ("maximum", "≤ {}"),
          ("exclusiveMaximum", "< {}"), ("minItems", "at least {} items"),
          ("maxItems", "at most {} items"), ("pattern", "matches <code>{}</code>"),
          ("format", "format {}"))
_PATTERN_SHOWN = 60
# the doors the spec does not describe
_OTHER = (("/openapi.json", "The OpenAPI spec this page is made from."),
          ("/mcp", "MCP over streamable HTTP (stateless), behind the same tokens: the same "
                   "tools as <code>knotwork mcp</code>."),
          ("/", "The web page: search, entities with their evidence, the review queue."))


def operations(spec: Schema) -> Iterator[tuple[str, str, Schema]]:
    """(METHOD, path, operation) for every operation of ``spec``, in its order."""
    for path, item in spec.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def _anchor(method: str, path: str) -> str:
    return "op-" + "".join(c if c.isalnum() else "-" for c in f"{method}{path}").strip("-")


def _type(s: Schema) -> str:
    """A schema's type in words, with links to the named schemas it uses."""
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        return f'<a href="#schema-{_e(name)}">{_e(name)}</a>'
    if "anyOf" in s or "oneOf" in s:
        kinds = [_type(k) for k in s.get("anyOf", s.get("oneOf", []))]
        return " | ".join(dict.fromkeys(kinds))
    if "const" in s:
        return f"<code>{_e(json.dumps(s['const']))}</code>"
    if "enum" in s:
        return "one of " + ", ".join(f"<code>{_e(json.dumps(v))}</code>" for v in s["enum"])
    kind = s.get("type")
    if kind == "array":
        return "list of " + _type(s.get("items", {}))
    if kind == "object" and "additionalProperties" in s and isinstance(
            s["additionalProperties"], Mapping):
        return "map of " + _type(s["additionalProperties"])
    return _e(kind or "any")


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and len(value) > _PATTERN_SHOWN:  # an ISO date's rule
        return _e(value[:_PATTERN_SHOWN]) + "… (whole in openapi.json)"
    return _e(value)


def _own_rules(s: Schema) -> str:
    return "; ".join(text.format(_number(s[key])) for key, text in _RULES if key in s)


def _rules(s: Schema) -> str:
    """A schema's limits and default; a union's alternatives joined by "or"."""
    alternatives = [r for r in (_own_rules(k) for k in s.get("anyOf", [])) if r]
    parts = [r for r in (_own_rules(s), " or ".join(alternatives)) if r]
    if "default" in s:
        parts.append(f"default <code>{_e(json.dumps(s['default']))}</code>")
    return "; ".join(parts)


def _fields_table(rows: Sequence[tuple[str, Schema, bool, str]]) -> str:
    """A table of (name, schema, required, where) rows; ``where`` only for parameters."""
    if not rows:
        return '<p class="dim">None.</p>'
    body = "".join(
        f"<tr><td><code>{_e(name)}</code>{' <strong>required</strong>' if req else ''}"
        f"{f' <span class=dim>({_e(where)})</span>' if where else ''}</td>"
        f"<td>{_type(s)}</td><td>{_rules(s)}</td><td>{_inline(s.get('description', ''))}"
        "</td></tr>"
        for name, s, req, where in rows)
    return ("<table><thead><tr><th>name</th><th>type</th><th>rules</th><th>what</th></tr>"
            f"</thead><tbody>{body}</tbody></table>")


def _properties(s: Schema) -> list[tuple[str, Schema, bool, str]]:
    required = set(s.get("required", ()))
    return [(k, v, k in required, "") for k, v in s.get("properties", {}).items()]


def _inline(text: str) -> str:
    """``text`` escaped, its ``literals`` as code."""
    return re.sub(r"``(.+?)``", r"<code>\1</code>", _e(text))


def _text(text: str) -> str:
    """The paragraphs of a docstring."""
    return "".join(f"<p>{_inline(p.strip())}</p>" for p in text.split("\n\n") if p.strip())


def _first_line(op: Schema) -> str:
    """What an operation does, in its docstring's first sentence (else its summary)."""
    text = " ".join(op.get("description", "").split("\n\n")[0].split())
    return text.split(": ")[0].split(". ")[0].rstrip(".") or op.get("summary", "")


def _body(spec: Schema, media: str, schema: Schema) -> str:
    """A request body: its schema's name and, for a named object, its fields."""
    out = f"<h3>Body <span class=dim>({_e(media)})</span></h3><p>{_type(schema)}</p>"
    name = schema.get("$ref", "").rsplit("/", 1)[-1]
    named = spec.get("components", {}).get("schemas", {}).get(name)
    return out + (_fields_table(_properties(named)) if named else "")


def _operation(spec: Schema, method: str, path: str, op: Schema) -> str:
    params = [(p["name"], {**p.get("schema", {}), **({"description": p["description"]}
                                                      if "description" in p else {})},
               bool(p.get("required")), p.get("in", "")) for p in op.get("parameters", [])]
    out = [f'<section id="{_anchor(method, path)}"><h2><code>{method} {_e(path)}</code></h2>',
           f"<p><strong>{_e(op.get('summary', ''))}</strong>"
           f"{' · ' + ', '.join(_e(t) for t in op.get('tags', [])) if op.get('tags') else ''}"
           "</p>", _text(op.get("description", "")), "<h3>Parameters</h3>",
           _fields_table(params)]
    body = op.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            out.append(_body(spec, media, content.get("schema", {})))
    answers = "".join(
        f"<li><code>{_e(code)}</code> {_e(r.get('description', ''))}"
        + "".join(f" · {_e(m)}: {_type(c.get('schema', {}))}" if c.get("schema") else
                  f" · {_e(m)}" for m, c in r.get("content", {}).items()) + "</li>"
        for code, r in op.get("responses", {}).items())
    out.append(f"<h3>Answers</h3><ul>{answers}</ul></section>")
    return "".join(out)


def render(spec: Schema) -> str:
    """The whole reference page for ``spec`` (an OpenAPI 3 document)."""
    info = spec.get("info", {})
    ops = list(operations(spec))
    index = "".join(
        f'<tr><td><code>{m}</code></td><td><a href="#{_anchor(m, p)}"><code>{_e(p)}</code>'
        f"</a></td><td>{_inline(_first_line(op))}</td></tr>" for m, p, op in ops)
    others = "".join(f"<li><code>{_e(p)}</code>: {what}</li>" for p, what in _OTHER)
    schemas = "".join(
        f'<section id="schema-{_e(name)}"><h3>{_e(name)}</h3>'
        f"{_text(s.get('description', ''))}{_fields_table(_properties(s))}</section>"
        for name, s in spec.get("components", {}).get("schemas", {}).items())
    title = f"{info.get('title', 'API')} {info.get('version', '')}".strip()
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} · API reference</title><style>{_CSS}
code{{font-size:.9em}}section{{margin:1.5rem 0}}h2{{border-top:1px solid #ddd;
padding-top:1rem}}</style></head><body><a class="skip" href="#main">Skip to content</a>
<header><strong><a href="/">knotwork</a></strong><nav><a href="/docs">API reference</a> ·
<a href="/openapi.json">openapi.json</a></nav></header><main id="main" tabindex="-1">
<h1>{_e(title)}: API reference</h1>{_text(info.get('description', ''))}
<p>Send JSON with <code>Content-Type: application/json</code>. A server locked by a token
wants <code>Authorization: Bearer &lt;token&gt;</code>; <code>X-Actor</code> names who
writes when no store token does. Every error answers
<code>{{"error": kind, "message": text}}</code>.</p>
<h2>Routes</h2><table><thead><tr><th>method</th><th>path</th><th>what</th></tr></thead>
<tbody>{index}</tbody></table><ul>{others}</ul>
{"".join(_operation(spec, m, p, op) for m, p, op in ops)}
<h2 id="schemas">Schemas</h2>{schemas}</main></body></html>"""


@router.get("/docs")
def docs(request: Request) -> HTMLResponse:
    """The reference page of this app's own spec."""
    return HTMLResponse(render(request.app.openapi()))
