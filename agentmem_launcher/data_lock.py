"""One `agentmem up` per data folder: an exclusive `flock` on `agentmem.lock` in it, held
for the life of the process. The kernel releases it when the process ends, however it
ends, so a lock left by a killed process never blocks a restart. The file says who holds
it (pid and address), for the refusal of a second `agentmem up`."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from agentmem.process import private_files

LOCK_NAME = "agentmem.lock"


class DataDirInUse(Exception):
    pass


def hold(data_dir: Path, address: str) -> IO[str]:
    """The held lock (keep the returned file open), or DataDirInUse naming the holder."""
    private_files.make_dir(data_dir)
    path = data_dir / LOCK_NAME
    f = private_files.open_text(path, "a+")  # never truncated before it is held
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise DataDirInUse(
            f"{data_dir} is in use by another agentmem up ({holder}): two servers must not "
            "share a data folder; stop that one, or give this one another --data-dir"
        ) from None
    describe(f, address)
    return f


def describe(f: IO[str], address: str) -> None:
    """Writes who holds the lock (again, once the address is known)."""
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}, serving on {address}\n")
    f.flush()
