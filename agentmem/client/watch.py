"""When a broken watch reconnects: one policy for `Client.watch` and `AsyncClient.watch`.

A watch resumes from the last sequence it yielded. An expired credential (with a provider of
fresh ones) resumes at once; any other resumable break waits the retry policy's backoff,
growing with the failures in a row, until `give_up_after` seconds have passed without an
event, and then raises the last error (`give_up_after=0`: at the first break).
`on_resume(last, error)` is told before each resume.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from agentmem.client.errors import ApiError, TokenExpired
from agentmem.client.settings import RetryPolicy

OnResume = Callable[[int, ApiError], None]


@dataclass
class Resume:
    policy: RetryPolicy  # its backoff between reconnects
    give_up_after: float
    on_resume: OnResume | None = None
    failures: int = 0
    failing_since: float = 0.0

    @classmethod
    def of(
        cls, policy: RetryPolicy, give_up_after: float | None, on_resume: OnResume | None
    ) -> Resume:
        """`give_up_after` None: the policy's deadline."""
        return cls(policy, policy.deadline if give_up_after is None else give_up_after, on_resume)

    def progressed(self) -> None:
        """An event arrived: the failures in a row start again."""
        self.failures = 0

    def wait_before_resuming(self, last: int, error: ApiError) -> float:
        """Seconds to wait before reconnecting after `error` (0: at once); raises `error`
        once the watch has failed for longer than `give_up_after`."""
        if isinstance(error, TokenExpired):  # at once, with the provider's fresh token
            self._tell(last, error)
            return 0.0
        self.failures += 1
        now = time.monotonic()
        self.failing_since = now if self.failures == 1 else self.failing_since
        if self.give_up_after <= 0 or now - self.failing_since > self.give_up_after:
            raise error
        self._tell(last, error)
        return self.policy.backoff(self.failures)

    def _tell(self, last: int, error: ApiError) -> None:
        if self.on_resume is not None:
            self.on_resume(last, error)
