"""What operators watch: the Observer the core and adapters report to (metrics.py
implements it), and the one that reports nowhere."""

from __future__ import annotations

from typing import Protocol

from docassist.core.sources import SyncOutcome


class Observer(Protocol):
    """What the core and the adapters report as it happens; `docassist.serving.metrics` turns it
    into Prometheus metrics (the core never imports prometheus-client). Every method is cheap and
    never raises."""

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        """A turn ended (committed, or not saved: `storage_unavailable`)."""
        ...

    def model_called(self, backend: str, seconds: float, failed: bool) -> None: ...

    def model_retried(self, what: str) -> None: ...

    def retrieval_finished(self, retriever: str, seconds: float) -> None: ...

    def rate_limited(self) -> None:
        """A message, command or button refused by the rate limit."""
        ...

    def sync_finished(self, outcome: SyncOutcome) -> None: ...


class NullObserver:
    """Reports nowhere: the terminal, the CLI and tests that do not watch."""

    def turn_finished(self, status: str, decision: str, seconds: float) -> None:
        pass

    def model_called(self, backend: str, seconds: float, failed: bool) -> None:
        pass

    def model_retried(self, what: str) -> None:
        pass

    def retrieval_finished(self, retriever: str, seconds: float) -> None:
        pass

    def rate_limited(self) -> None:
        pass

    def sync_finished(self, outcome: SyncOutcome) -> None:
        pass


NULL_OBSERVER: Observer = NullObserver()
