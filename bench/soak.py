"""Load-and-check (`make soak`): N clients x T seconds of load against the services started
as a user starts them (`agentmem runtime`, `agentmem gateway`), through the public client
(`agentmem.Client`), then the checks. Retrieval by meaning is on (the default local model,
offline) unless `--lexical`, or the database cannot hold vectors.

Modes (`--mode`, default both, one after the other, each on fresh services and data):
- `mixed` (`bench.soak_mixed`): inserts, searches, compare-and-swap races on classification
  and thread modes, and watchers, in one tenant;
- `append` (`bench.soak_append`): agents appending a turn after each exchange to shared
  conversations (racing with compare-and-swap) and their own, while others search, over
  `--tenants` tenants.

Every mode prints the same figures (`bench.soak_figures`): writes acknowledged per second,
write latency p50 / p99, meaning lag p50 / p99 (acknowledgement to found by meaning,
`bench.soak_meaning`), whether and when the embedding queue drained after the load, and
the calls that ended in an error. A run fails (exit 1) when: a call ends in an unexpected
error; an acknowledged write is lost (append: a turn not stored exactly once where its
revision says); a sampled turn is not found by its own word at once; a probe is not found
by meaning within `--meaning-bound` s; the queue does not drain within `--drain-bound` s
of the load's end, or sets a source aside; the runtime logs more than a few warnings, or
one of them again and again (an error loop); or a mode's own check fails.

Usage: python -m bench.soak [--mode mixed|append|both] [--clients N] [--seconds T]
       [--tenants 2] [--database-url postgresql+psycopg://… | --pgvector] [--lexical]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentmem import Client
from bench import soak_append, soak_mixed
from bench.soak_append import Habits
from bench.soak_checks import WARNING_LEVELS, check_turns, log_problems, percentile
from bench.soak_figures import Figures, lines, table
from bench.soak_meaning import MeaningLags, Prober, calibrate, wait_drained
from bench.soak_stack import Stack, Tenant, database, log_records, stack, tenants
from bench.soak_texts import PROBES, Probe

DEFAULT_CLIENTS = {"mixed": 32, "append": 16}
CALIBRATION = Tenant("soak-probes", "soak-token-probes")  # where the probes are calibrated


class Options(argparse.Namespace):
    mode: str
    clients: int | None
    seconds: float
    tenants: int
    database_url: str | None
    pgvector: bool
    lexical: bool
    meaning_bound: float
    drain_bound: float
    word_check_every: int
    think: float
    max_warnings: int
    probes: list[Probe] | None = None  # those calibration kept (the first mode's)


def retrieval_of(address: str, token: str) -> str:
    with Client(address, token) as c:
        r = c.get_capabilities().retrieval
    return r.mode if r.mode == "hybrid" else f"lexical ({r.lexical_only_reason})"


def prober_for(s: Stack, keys: list[Tenant], retrieval: str, o: Options) -> Prober | None:
    """With retrieval by meaning, a prober of the load's tenants, with the probes the
    service answers (calibrated once a run, in a tenant of their own); else None."""
    if retrieval != "hybrid":
        return None
    if o.probes is None:
        started = time.monotonic()
        o.probes = calibrate(s.address, CALIBRATION.token)
        print(
            f"  probes of meaning: {len(o.probes)} of {len(PROBES)} answered in calibration "
            f"({time.monotonic() - started:.0f} s)"
        )
    return Prober(s.address, [k.token for k in keys], o.probes)


def after_load(
    s: Stack, keys: list[Tenant], prober: Prober | None, ended: float, o: Options, f: Figures
) -> None:
    """The embedding queue's drain and the probes' lags (while it drains), then the
    runtime's log; their failures go to `f`."""
    if prober is not None:
        prober.close()
        f.drain = wait_drained(s.address, [k.token for k in keys], ended, o.drain_bound)
        f.meaning = prober.finish(ended + o.meaning_bound)
        if len(f.meaning.by_tenant) > 1:
            print(
                "  meaning lag p50 by tenant: "
                + ", ".join(
                    f"{keys[t].name} {percentile(lags, 50):.1f} s"
                    for t, lags in sorted(f.meaning.by_tenant.items())
                )
            )
        _meaning_failures(f.meaning, o.meaning_bound, f.failures)
        if f.drain.seconds is None:
            f.failures.append(f"the embedding queue did not drain within {o.drain_bound:.0f} s")
        if f.drain.set_aside or f.drain.last_errors:
            f.failures.append(
                f"embedding failed: {f.drain.set_aside} set aside, {f.drain.last_errors}"
            )
    runtime = log_records(s.runtime_log)
    gateway = log_records(s.gateway_log)
    problems = log_problems(runtime, o.max_warnings)
    print(
        f"  logs at warning or above: runtime {len(_loud(runtime))}, gateway "
        f"{len(_loud(gateway))}" + ("" if not problems else ": " + "; ".join(problems[:5]))
    )
    for service, records in (("runtime", runtime), ("gateway", gateway)):
        for line in _first_of_each(_loud(records))[:3]:
            print(f"    {service}: {line}")
    f.failures += [f"runtime log: {p}" for p in problems]
    if f.errors:
        f.failures.append(f"{f.errors} calls ended in an unexpected error")


def _loud(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if str(r.get("level")) in WARNING_LEVELS]


def _first_of_each(records: list[dict[str, Any]]) -> list[str]:
    """Each distinct message once, with its fields (an exception's last lines)."""
    seen: dict[str, str] = {}
    for r in records:
        msg = str(r.get("msg", ""))
        if msg in seen:
            continue
        fields = {k: v for k, v in r.items() if k not in ("ts", "level", "service", "msg", "exc")}
        exc = str(r.get("exc", "")).strip().splitlines()[-12:]
        seen[msg] = f"{r.get('level')} {msg} {fields}" + "".join(f"\n      {x}" for x in exc)
    return list(seen.values())


def _meaning_failures(m: MeaningLags, bound: float, failures: list[str]) -> None:
    late = sum(1 for lag in m.lags if lag > bound)
    if m.missing or late:
        failures.append(f"{len(m.missing) + late} probes not found by meaning within {bound:.0f} s")
    for missing in m.missing[:5]:
        print(f"    not found by meaning: {missing}")
    if m.errors:
        failures.append(f"{m.errors} probe searches failed")


def run_append(s: Stack, keys: list[Tenant], backend: str, o: Options) -> Figures:
    clients = o.clients or DEFAULT_CLIENTS["append"]
    retrieval = retrieval_of(s.address, keys[0].token)
    tokens = [k.token for k in keys]
    prober = prober_for(s, keys, retrieval, o)
    rec, elapsed = soak_append.run_load(
        s.address, tokens, clients, o.seconds, prober, Habits(o.word_check_every, o.think)
    )
    ended = time.monotonic()
    mode = f"append (think {o.think:g} s)" if o.think else "append"
    f = Figures(
        mode, backend, retrieval, clients, elapsed, "appends",
        sum(1 for a in rec.acked.values() if a.revision > 1), rec.latencies, rec.codes,
    )  # fmt: skip
    after_load(s, keys, prober, ended, o, f)
    stored = soak_append.stored_turns(s.address, tokens, rec.conversations)
    problems = check_turns(rec.acked, rec.in_doubt, stored)
    print(
        f"  turns: {len(rec.acked)} acknowledged (first turns included) in "
        f"{len(rec.conversations)} conversations, {len(rec.in_doubt)} in doubt, "
        f"{rec.mismatches} revision mismatches re-read and retried, {rec.given_up} given up; "
        + ("all stored once, in order" if not problems else f"{len(problems)} problems")
    )
    for p in problems[:10]:
        print(f"    {p}")
    f.failures += problems[:3]
    print(f"  found by their word at once: {rec.word_checks - len(rec.word_misses)} of "
          f"{rec.word_checks} sampled turns")  # fmt: skip
    if rec.word_misses:
        f.failures.append(f"{len(rec.word_misses)} turns not found by their word at once")
    if rec.given_up:
        f.failures.append(f"{rec.given_up} turns given up after compare-and-swap retries")
    f.failures += rec.crashes
    return f


def run_mixed(s: Stack, keys: list[Tenant], backend: str, o: Options) -> Figures:
    clients = o.clients or DEFAULT_CLIENTS["mixed"]
    retrieval = retrieval_of(s.address, keys[0].token)
    prober = prober_for(s, keys[:1], retrieval, o)
    rec, elapsed = soak_mixed.run_load(s.address, keys[0].token, clients, o.seconds, prober)
    ended = time.monotonic()
    f = Figures(
        "mixed", backend, retrieval, clients, elapsed, "inserts",
        len(rec.acked), rec.latencies, rec.codes,
    )  # fmt: skip
    after_load(s, keys, prober, ended, o, f)
    f.failures += soak_mixed.check(s.address, keys[0].token, rec)
    return f


def run(o: Options) -> int:
    modes = ["mixed", "append"] if o.mode == "both" else [o.mode]
    backend = (
        "PostgreSQL + pgvector" if o.pgvector else "PostgreSQL" if o.database_url else "SQLite"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="agentmem-soak-") as name:
        tmp = Path(name)
        for mode in modes:
            print(f"{mode} soak on {backend}:", flush=True)
            keys = tenants(o.tenants if mode == "append" else 1)
            with (
                database(tmp, o.database_url, o.pgvector) as url,
                stack(tmp, [*keys, CALIBRATION], url, o.lexical, mode) as s,
            ):
                f = (run_append if mode == "append" else run_mixed)(s, keys, backend, o)
            for line in lines(f):
                print(line)
            print("  result: " + ("PASS" if not f.failures else "FAIL: " + "; ".join(f.failures)))
            print(flush=True)
            results.append(f)
    for line in table(results):
        print(line)
    return 0 if all(not f.failures for f in results) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("mixed", "append", "both"), default="both")
    parser.add_argument("--clients", type=int, help="clients (default: 32 mixed, 16 append)")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--tenants", type=int, default=2, help="tenants of the append mode")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--database-url",
        default=os.environ.get("AGENTMEM_TEST_DATABASE_URL"),
        help="a PostgreSQL server URL (a fresh database is made on it); default SQLite",
    )
    where.add_argument(
        "--pgvector",
        action="store_true",
        help="a PostgreSQL with pgvector of the soak's own (the pgserver package)",
    )
    parser.add_argument("--lexical", action="store_true", help="retrieval by words only")
    parser.add_argument(
        "--meaning-bound", type=float, default=120, help="seconds until a probe is found by meaning"
    )
    parser.add_argument(
        "--drain-bound", type=float, default=120, help="seconds after the load to drain the queue"
    )
    parser.add_argument(
        "--word-check-every",
        type=int,
        default=10,
        help="search for the word of one acknowledged turn in this many (0: none)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0,
        help="append: seconds an agent waits between its turns, on average (0: none)",
    )
    parser.add_argument(
        "--max-warnings", type=int, default=5, help="runtime log lines at warning or above"
    )
    return run(parser.parse_args(namespace=Options()))


if __name__ == "__main__":
    sys.exit(main())
