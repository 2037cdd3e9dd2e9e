"""REST routes that use the configured model: ``POST /ask`` and ``POST /extract``.

Without a model configured (``llm_url`` and ``llm_model``) both answer 503 and call
nothing. An extraction runs as a background job, one at a time per server: ``POST
/extract`` answers 202 with the job's id, ``GET /extract/{job}`` its progress and, once
done, its report.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from ..errors import BackendUnavailable, Conflict, KnotworkError, NotFound
from . import auth
from .schemas import _Request


class AskRequest(_Request):
    question: str = Field(min_length=1, max_length=L.QUERY_CHARS, pattern=r"\S",
                          description="A question about the notes.")
    max_tokens: int = Field(3000, ge=200, le=200_000, description=(
        "Token budget of the context the model is given."))
    scopes: list[Annotated[str, Field(max_length=L.SCOPE_CHARS)]] | None = Field(
        None, max_length=L.SCOPES_MAX, description="Read only these scopes.")


class ExtractRequest(_Request):
    path: str | None = Field(None, min_length=1, max_length=L.PATH_CHARS,
                             pattern=r"^[^\x00]+$", description=(
        "A folder or one note to sync and extract from (default: every note of the scope)."))
    budget: int | None = Field(None, ge=1, le=1_000_000_000,
                               description="At most this many tokens.")


def _model(request: Request) -> Knotwork:
    """The facade, once the request is known good: without a model, 503 (the request's
    own faults are still 422 first, so a client learns them without a model)."""
    kw: Knotwork = request.app.state.kw
    if not kw.llm_configured():
        raise BackendUnavailable("model", hint="no model is configured: set KNOTWORK_LLM_URL"
                                 " and KNOTWORK_LLM_MODEL")
    return kw


class Jobs:
    """The server's extraction jobs, kept in memory: id → state."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.jobs: dict[str, dict[str, Any]] = {}

    def start(self, kw: Knotwork, body: ExtractRequest, *, actor: str) -> dict[str, Any]:
        with self._lock:
            if any(j["status"] == "running" for j in self.jobs.values()):
                raise Conflict("an extraction is running already: wait for it")
            job: dict[str, Any] = {
                "job": str(next(self._ids)), "status": "running", "done": 0, "total": 0,
                "started_at": time.time(), "report": None, "error": None}
            self.jobs[job["job"]] = job

        def progress(done: int, total: int) -> None:
            job["done"], job["total"] = done, total

        def run() -> None:
            try:
                job["report"] = kw.extract(body.path, budget=body.budget,
                                           progress=progress, actor=actor).as_dict()
                job["status"] = "done"
            except KnotworkError as exc:
                job["status"], job["error"] = "failed", str(exc)
            except Exception as exc:  # noqa: BLE001 - a job reports its failure; the server goes on
                job["status"], job["error"] = "failed", f"{type(exc).__name__}: {exc}"

        threading.Thread(target=run, name=f"knotwork-extract-{job['job']}", daemon=True).start()
        return dict(job)


router = APIRouter(tags=["model"])


def _jobs(request: Request) -> Jobs:
    jobs: Jobs | None = getattr(request.app.state, "extract_jobs", None)
    if jobs is None:
        jobs = request.app.state.extract_jobs = Jobs()
    return jobs


@router.post("/ask")
def ask(body: AskRequest, request: Request) -> dict[str, object]:
    """An answer from the notes only, with [path:line] citations, each checked against the
    notes (``flagged``), or the fixed refusal when the notes do not answer. A token's
    question reads its own scopes only. 503 when no model is configured."""
    kw = _model(request)
    return kw.ask(body.question, max_tokens=body.max_tokens,
                  scopes=auth.read_scopes(request, body.scopes)).as_dict()


@router.post("/extract", status_code=202)
def extract(body: ExtractRequest, request: Request, response: Response) -> dict[str, object]:
    """Start extracting facts with the model (cached per chunk, within ``budget``);
    poll ``GET /extract/{job}``. The facts land in the store's scope: a token whose
    scopes lack it is refused. 503 when no model is configured."""
    kw = _model(request)
    auth.write_scope(request, kw.settings.scope)
    job = _jobs(request).start(kw, body, actor=auth.actor(request))
    response.headers["Location"] = f"/extract/{job['job']}"
    return job


@router.get("/extract/{job}")
def extract_job(request: Request, job: Annotated[str, Path(description="The job's id.")]
                ) -> dict[str, object]:
    """An extraction job: ``status`` running | done | failed, chunks ``done`` of
    ``total`` sent so far, and the ``report`` when done (for the store's scope: a token
    whose scopes lack it is refused)."""
    auth.home_scope(request)
    found = _jobs(request).jobs.get(job)
    if found is None:
        raise NotFound("extraction job", job)
    return dict(found)
