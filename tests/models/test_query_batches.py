"""Questions asked at the same time are embedded in one forward pass (models/embedders.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from docassist.models.embedders import RecentQueries, Vectors


def test_questions_that_wait_for_a_forward_pass_share_the_next_one() -> None:
    passes: list[list[str]] = []
    first_pass_running, release = threading.Event(), threading.Event()

    def encode(texts: list[str]) -> Vectors:
        passes.append(list(texts))
        if len(passes) == 1:  # hold the first pass while the other questions arrive
            first_pass_running.set()
            release.wait(10)
        return np.array([[float(len(text)), 1.0] for text in texts], dtype=np.float32)

    queries = RecentQueries(encode)
    questions = [f"question {'x' * i}" for i in range(9)]
    with ThreadPoolExecutor(max_workers=9) as pool:
        first = pool.submit(queries.embed, questions[:1], 2)
        assert first_pass_running.wait(10)
        rest = [pool.submit(queries.embed, [question], 2) for question in questions[1:]]
        while len(queries._passes._queue) < 8:  # all waiting for the next pass
            threading.Event().wait(0.01)
        release.set()
        vectors = [first.result(10), *(future.result(10) for future in rest)]
    assert [row[0][0] for row in vectors] == [float(len(q)) for q in questions]  # each its own
    assert passes[0] == questions[:1] and len(passes) == 2
    assert sorted(passes[1]) == sorted(questions[1:])
    assert queries.embed(questions[3:4], 2)[0][0] == len(questions[3])  # kept: no third pass
    assert len(passes) == 2
