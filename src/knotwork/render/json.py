"""The KnowledgeContext as JSON (the seed's shape plus evidence and summary)."""

from __future__ import annotations

import json

from ..types import KnowledgeContext


def render_json(ctx: KnowledgeContext) -> str:
    """Compact JSON: what an agent receives, and what budgets count."""
    return json.dumps(ctx.as_dict(), ensure_ascii=False, separators=(",", ":"))
