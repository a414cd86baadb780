"""A stand-in model with a capacity: at most `capacity` requests are served at once, each
takes `latency` seconds; the rest wait. It counts what was in flight (the peak) and what
was completed, so tests can see how many turns a process kept waiting on the model, and
benchmarks can compare throughput with the model's limit (capacity ÷ latency)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from docassist_testkit.fakes.model_server import Reply


class CapacityModel:
    def __init__(self, respond: Callable[[Any], Reply], capacity: int, latency: float) -> None:
        self.respond = respond
        self.capacity = capacity
        self.latency = latency
        self._slots = threading.BoundedSemaphore(capacity)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.completed = 0

    def __call__(self, body: Any) -> Reply:
        with self._slots:
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            try:
                reply = self.respond(body)
                time.sleep(self.latency)
                reply.delay = 0.0
            finally:
                with self._lock:
                    self.in_flight -= 1
                    self.completed += 1
        return reply
