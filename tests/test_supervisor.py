"""`agentmem up`'s supervisor: a service that keeps dying is restarted with backoff, said so,
and then given up on with a non-zero exit, so that an outer supervisor sees the failure."""

from __future__ import annotations

import signal
import sys

from agentmem_launcher import supervisor

# Serves (writes its port file), then dies with code 3 at once.
DIES = "import sys; open(sys.argv[sys.argv.index('--port-file') + 1], 'w').write('1'); sys.exit(3)"


def test_a_service_that_keeps_dying_makes_up_exit_non_zero(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(supervisor, "BACKOFF_S", (0.01, 0.02))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    child = supervisor.Child(
        "runtime", [sys.executable, "-c", DIES], {}, tmp_path / "port", "127.0.0.1:0"
    )
    try:
        child.start()
        assert supervisor.supervise([child]) == 1
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    err = capsys.readouterr().err
    assert err.count("exited with code 3; restarting it") == supervisor.MAX_RESTARTS
    assert f"exited with code 3 {supervisor.MAX_RESTARTS + 1} times" in err
