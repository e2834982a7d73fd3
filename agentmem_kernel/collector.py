"""The garbage collector of a service process, settled once it serves.

What startup made (modules, settings, protobuf descriptors, a loaded model, the runtime's
held postings) lives as long as the process, yet every full collection walked it again, each
pause the latency of the calls that met it (docs/benchmarks.md, design measurements).
`gc.freeze` moves what startup made out of the collector's generations (after one full
collection, so that no garbage is kept). The thresholds stay CPython's: the runtime's calls
leave small reference cycles (a transaction and its repositories), and collecting them 700
allocations at a time keeps each young collection short.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Called once, when the process serves (its long-lived objects made)."""
    gc.collect()
    gc.freeze()
