"""What every serving process offers operators beside its platform routes: `GET /readyz`
(readiness.py) and `GET /metrics` (metrics.py), and how it starts: background work, warm
indexes, unfinished events resumed — before the port opens, so no event is acked behind a
model load. Used by `docassist serve` (server.py) and by each platform served alone
(bot/slack/runner.py, bot/teams/runner.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from aiohttp import web

from docassist.bot.stale_courier import Post
from docassist.bot.web import HEALTH_PATH, json_response
from docassist.runtime import Runtime, warm_up
from docassist.serving.background import start_background
from docassist.serving.metrics import CONTENT_TYPE, Metrics
from docassist.serving.readiness import ModelProbe, readiness
from docassist.serving.turn_processes import TurnProcesses

logger = logging.getLogger(__name__)

READY_PATH: Final = "/readyz"
METRICS_PATH: Final = "/metrics"
OPERATOR_PATHS: Final = (HEALTH_PATH, READY_PATH, METRICS_PATH)
READY_TIMEOUT_SECONDS: Final = 10.0
"""A readiness check that takes longer (a database locked elsewhere, a model server that
does not answer) is itself the answer: not ready."""


def add_operator_routes(app: web.Application, runtime: Runtime, metrics: Metrics,
                        turns: TurnProcesses | None = None) -> None:
    """GET /readyz (with `turns`, at least one turn process must be ready) and GET
    /metrics; both run their blocking reads off the event loop."""
    probe = ModelProbe(runtime.settings)

    async def ready(_request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        try:
            state = await asyncio.wait_for(
                loop.run_in_executor(None, readiness, runtime, probe, turns),
                READY_TIMEOUT_SECONDS)
        except TimeoutError:
            return json_response({"ready": False, "reason": "the readiness checks timed out"},
                                 503)
        if not state.ready:
            logger.warning("not ready: %s", state.reason)
        return json_response({"ready": state.ready, "reason": state.reason,
                              "checks": state.checks, "degraded": state.degraded},
                             200 if state.ready else 503)

    async def scrape(_request: web.Request) -> web.Response:
        body = await asyncio.get_running_loop().run_in_executor(None, metrics.exposition)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    app.router.add_get(READY_PATH, ready)
    app.router.add_get(METRICS_PATH, scrape)


def start_serving(runtime: Runtime, couriers: Mapping[str, Post],
                  resumers: Sequence[tuple[str, Callable[[], int]]] = (),
                  answers: bool = True) -> None:
    """Background work, warm indexes, then each platform's unfinished events (Teams resumes
    its own when the server starts: its adapter needs the event loop). A process that
    `answers` no turn (turn processes answer every one) loads no model and builds no index:
    its turn processes do, and it would only hold a copy it never reads (~250 MB over the
    demo corpus, and seconds of both cores while they warm up)."""
    start_background(runtime, couriers)
    if answers:
        warm_up(runtime)
    for platform, resume in resumers:
        resumed = resume()
        if resumed:
            logger.warning("resumed %d unfinished %s event(s)", resumed, platform)
