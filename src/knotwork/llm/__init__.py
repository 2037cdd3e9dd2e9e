"""Bring your own model: extraction and cited answers through an OpenAI-compatible API.

Nothing here runs unless a model is configured (``KNOTWORK_LLM_URL`` and
``KNOTWORK_LLM_MODEL``): knotwork needs no model for anything else.

- ``client``: the chat-completions client (httpx; retries, concurrency, token usage);
- ``triples``: the extraction prompt, its JSON schema, the tolerant parser, grounding;
- ``cache``: each chunk's answer by chunk text + model + prompt version, in a file;
- ``extract``: the run over the store's chunks, on a hard token budget, resumable;
- ``answer``: the grounded question prompt and citation checking; ``service`` ties them
  to the facade.
"""

from __future__ import annotations

from .answer import REFUSAL, Answer, Citation
from .client import ChatClient, LLMConfig
from .extract import EXTRACTOR, ExtractReport

__all__ = ["EXTRACTOR", "REFUSAL", "Answer", "ChatClient", "Citation", "ExtractReport",
           "LLMConfig"]
