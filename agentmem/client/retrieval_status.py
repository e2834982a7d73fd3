"""What a person is told about search by meaning (GetCapabilities' `retrieval`): whether the
embedding indexer is behind the words, in plain words. The CLI's `capabilities` and
`doctor` and the console say the same."""

from __future__ import annotations

from datetime import UTC, datetime

from agentmem.v1 import capabilities_pb2

BEHIND_AFTER_S = 30.0  # a backlog older than this is reported: search by meaning lags


def behind(r: capabilities_pb2.RetrievalStatus) -> str:
    """A sentence when search by meaning is behind or failing ("" when it is not, or when
    retrieval is by words only)."""
    if r.mode != "hybrid":
        return ""
    said = []
    if r.embeddings_lag_seconds >= BEHIND_AFTER_S:
        said.append(
            f"search by meaning is {_duration(r.embeddings_lag_seconds)} behind: "
            f"{r.embeddings_pending} memories wait to be embedded (found by their words meanwhile)"
        )
    if r.embeddings_set_aside:
        said.append(
            f"{r.embeddings_set_aside} memories could not be embedded and were set aside "
            "(tried again hourly; found by their words)"
        )
    if r.embeddings_last_error:
        at = r.embeddings_last_error_at.ToDatetime(tzinfo=UTC)
        ago = (datetime.now(UTC) - at).total_seconds()
        error = r.embeddings_last_error
        said.append(f"the last embedding failure was {error}, {_duration(ago)} ago")
    return "; ".join(said)


def _duration(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    return f"{s // 3600} h"
