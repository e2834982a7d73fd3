"""When a broken watch reconnects: the one policy both clients follow."""

from __future__ import annotations

import inspect

import pytest

from agentmem import AsyncClient, Client
from agentmem.client.errors import TokenExpired, Unavailable
from agentmem.client.settings import RetryPolicy
from agentmem.client.watch import Resume

POLICY = RetryPolicy(initial=0.1, maximum=0.4, deadline=30.0)


def test_backoff_grows_with_the_failures_in_a_row_and_restarts_after_an_event() -> None:
    told: list[tuple[int, str]] = []
    resume = Resume.of(POLICY, None, lambda last, e: told.append((last, type(e).__name__)))
    waits = [resume.wait_before_resuming(7, Unavailable("down")) for _ in range(4)]
    assert waits == [0.1, 0.2, 0.4, 0.4]
    resume.progressed()
    assert resume.wait_before_resuming(9, Unavailable("down")) == 0.1
    assert told[0] == (7, "Unavailable") and told[-1] == (9, "Unavailable")


def test_an_expired_token_resumes_at_once_and_counts_no_failure() -> None:
    resume = Resume.of(POLICY, None, None)
    assert resume.wait_before_resuming(1, TokenExpired("expired")) == 0.0
    assert resume.failures == 0


def test_it_gives_up_after_the_given_seconds_without_progress() -> None:
    resume = Resume.of(POLICY, 5.0, None)
    resume.wait_before_resuming(1, Unavailable("down"))
    resume.failing_since -= 6.0  # as if the first failure were six seconds ago
    with pytest.raises(Unavailable):
        resume.wait_before_resuming(1, Unavailable("still down"))
    with pytest.raises(Unavailable):  # 0: at the first break
        Resume.of(POLICY, 0.0, None).wait_before_resuming(1, Unavailable("down"))


def test_both_clients_take_the_same_watch_options() -> None:
    def options(method: object) -> list[str]:
        return [p for p in inspect.signature(method).parameters if p != "self"]  # type: ignore[arg-type]  # a method

    assert options(Client.watch) == options(AsyncClient.watch)
    assert {"give_up_after", "on_resume", "retry"} <= set(options(AsyncClient.watch))
