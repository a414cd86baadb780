"""`docassist doctor`: does each configured backend answer, and how fast."""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel

from docassist.config import Settings
from docassist.core.errors import DocAssistError
from docassist.models import chat_model, get_model_embedder
from docassist.models.registry import RULES
from docassist.storage import Store

PING = "Reply with the single word OK."


class Check(BaseModel):
    role: str
    spec: str
    ok: bool
    latency_ms: float | None = None
    detail: str = ""


def _timed(role: str, spec: str, probe: Callable[[], str]) -> Check:
    started = time.perf_counter()
    try:
        detail = probe()
    except DocAssistError as error:
        return Check(role=role, spec=spec, ok=False, detail=str(error))
    latency = round((time.perf_counter() - started) * 1000, 1)
    return Check(role=role, spec=spec, ok=True, latency_ms=latency, detail=detail)


def run_checks(settings: Settings) -> list[Check]:
    config = settings.model_config_for()
    checks: list[Check] = []
    for role, spec in (("selection", settings.model),
                       ("answers", settings.answer_model or settings.model)):
        if spec == RULES:
            checks.append(Check(role=role, spec=spec, ok=True, latency_ms=0.0,
                                detail="built-in rules, no model"))
            continue

        def chat(spec: str = spec) -> str:
            reply = chat_model(spec, config).chat([{"role": "user", "content": PING}])
            return f"replied {reply.strip()[:40]!r}"

        checks.append(_timed(role, spec, chat))
    if settings.embedder == "none":
        checks.append(Check(role="embeddings", spec="none", ok=True,
                            detail="dense retrieval off (BM25 only)"))
    else:
        def embed() -> str:
            vectors = get_model_embedder(settings.embedder, config).embed_queries([PING])
            return f"{vectors.shape[1]} dimensions"

        checks.append(_timed("embeddings", settings.embedder, embed))

    def database() -> str:
        store = Store(settings.db)
        try:
            return (f"{len(store.documents())} documents, {len(store.current_chunks())} chunks, "
                    f"index version {store.index_version()}")
        finally:
            store.close()

    checks.append(_timed("database", str(settings.db), database))
    return checks
