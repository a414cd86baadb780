"""`GET /readyz`: can this process answer now? The database takes writes, the model servers
answer and the index is loaded; otherwise 503 with the reason (a load balancer or
Kubernetes then sends no traffic here, while `/healthz` still says the process is up)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Final

from docassist.config import Settings
from docassist.core.errors import DocAssistError
from docassist.runtime import Runtime
from docassist.serving.doctor import Check, model_checks
from docassist.serving.turn_processes import TurnProcesses

MODEL_CHECK_SECONDS: Final = 30.0
"""How long a model-server check is reused: a probe every few seconds must not cost a model
call each (a 7B model takes seconds to say OK)."""


@dataclass
class Readiness:
    ready: bool
    checks: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    degraded: list[str] = field(default_factory=list)
    """Optional dependencies that do not work now (the process still answers)."""


class ModelProbe:
    """The doctor's model checks, cached for MODEL_CHECK_SECONDS."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._checked: tuple[float, list[Check]] | None = None

    def checks(self) -> list[Check]:
        with self._lock:
            now = time.monotonic()
            if self._checked is None or now - self._checked[0] > MODEL_CHECK_SECONDS:
                self._checked = (now, model_checks(self.settings, with_local=False))
            return self._checked[1]


def readiness(runtime: Runtime, models: ModelProbe,
              turns: TurnProcesses | None = None) -> Readiness:
    """Every check, the first failure as the reason."""
    checks: dict[str, str] = {}
    problems: list[str] = []
    if turns is not None:
        ready = turns.ready()
        checks["turn_processes"] = f"{ready} of {turns.count} ready"
        if not ready:
            problems.append(f"turn processes: none of {turns.count} is ready")
    try:
        runtime.store.ensure_writable()
        checks["database"] = "writable"
    except DocAssistError as error:
        checks["database"] = str(error)
        problems.append(f"database: {error}")
    for check in models.checks():
        checks[f"model:{check.role}"] = "ok" if check.ok else check.detail
        if not check.ok:
            problems.append(f"{check.role} model {check.spec}: {check.detail}")
    try:
        documents = len(runtime.store.documents())
    except DocAssistError as error:
        documents = 0
        problems.append(f"index: {error}")
    checks["index"] = f"{documents} documents"
    if not documents:
        problems.append("index: no document is indexed")
    degraded = []
    for name, problem_of in runtime.optional.items():
        problem = problem_of()
        checks[name] = problem or "ok"
        if problem:
            degraded.append(f"{name}: {problem}")
    return Readiness(ready=not problems, checks=checks,
                     reason=problems[0] if problems else None, degraded=degraded)
