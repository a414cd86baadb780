"""What a turn process runs (`docassist turn-worker`, started by its serving process, see
turn_processes.py): the inbox workers of the platforms its serving process serves, claiming
and answering their events until stdin ends, then finishing the turns they run. Teams'
replies are sent from an event loop, which runs on a thread of its own here."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from docassist.bot.slack.runner import slack_adapter, slack_settings
from docassist.bot.teams.runner import TeamsEndpoint, teams_settings
from docassist.runtime import Runtime, warm_up
from docassist.serving.inbox import InboxWorker
from docassist.serving.limits import TURN_PROCESS_BLAS_THREADS
from docassist.serving.server import Platforms, use_directories
from docassist.serving.turn_processes import (
    RelayObserver,
    limit_blas_threads,
    lower_priority,
    turn_process_holder,
    wait_for_wakeups,
)

PLATFORMS = ("slack", "teams")


def turn_process_platforms(runtime: Runtime, platforms: Sequence[str]) -> Platforms:
    """The adapters of `platforms` as a turn process uses them: this process's share of the
    replica's turns, claims named after it (ConfigurationError when a platform's settings
    are missing)."""
    slots, replica = runtime.settings.turns_per_process(), turn_process_holder()
    return Platforms(
        slack=slack_adapter(runtime, slack_settings(), turn_slots=slots, replica=replica)
        if "slack" in platforms else None,
        teams=TeamsEndpoint(runtime, teams_settings(), turn_slots=slots, replica=replica)
        if "teams" in platforms else None)


def run_turn_process(runtime: Runtime, platforms: Platforms) -> None:
    lower_priority(runtime.settings.turn_nice)  # acks first when both want a core
    limit_blas_threads(TURN_PROCESS_BLAS_THREADS)
    use_directories(runtime, platforms)
    warm_up(runtime)
    workers: list[InboxWorker] = []
    loop: asyncio.AbstractEventLoop | None = None
    if platforms.slack is not None:
        platforms.slack.worker.resume()
        workers.append(platforms.slack.worker)
    if platforms.teams is not None:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="teams-outbound", daemon=True).start()
        platforms.teams.adapter.start(loop)  # resumes its worker
        workers.append(platforms.teams.adapter.worker)
    if isinstance(runtime.engine.observer, RelayObserver):
        runtime.engine.observer.ready()

    def wake() -> None:
        for worker in workers:
            worker.poke()

    try:
        wait_for_wakeups(wake)
    finally:
        for worker in workers:
            worker.close()
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
