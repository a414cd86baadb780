from __future__ import annotations

from docassist.serving.ratelimit import RateLimiter


def test_per_user_and_global_limits_say_when_to_retry() -> None:
    now = [1000.0]
    limiter = RateLimiter(per_user=2, global_limit=3, clock=lambda: now[0])
    assert [limiter.check("a"), limiter.check("a")] == [0, 0]
    now[0] += 10
    assert limiter.check("a") == 50  # the oldest of a's turns leaves the window in 50 s
    assert limiter.check("b") == 0
    assert limiter.check("c") == 50  # the global limit (3) is reached
    now[0] += 51
    assert limiter.check("a") == 0 and limiter.check("c") == 0
    assert RateLimiter(per_user=0, global_limit=0).check("x") == 0  # 0 = unlimited


def test_an_arrival_is_counted_once_and_keeps_its_first_verdict() -> None:
    now = [1000.0]
    limiter = RateLimiter(per_user=1, global_limit=0, clock=lambda: now[0])
    assert [limiter.check("a", "Ev1") for _ in range(3)] == [0, 0, 0]  # one message, 3 times
    assert limiter.check("a", "Ev2") == 60  # the next message is over the limit ...
    assert limiter.check("a", "Ev2") == 60  # ... and stays so, without counting again
    now[0] += 61  # the window moved on: the ids are forgotten with it
    assert limiter.check("a", "Ev2") == 0
