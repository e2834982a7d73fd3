"""Memory is private: what the servers and the CLI write (the database and its WAL, logs,
the dev credential, the data folder's lock, exports) is readable by its owner only —
files 0600, folders 0700 — whatever the umask the process was started with."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import IO

PRIVATE_UMASK = 0o077


def restrict() -> None:
    """Everything this process creates from now on is its owner's only (the umask is
    tightened, never loosened). SQLite gives its WAL and shared-memory files the database
    file's permissions, so they follow."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)


def make_dir(path: Path) -> None:
    """The folder and its missing parents, created 0700 (an existing folder is left as
    it is: it may be the user's own)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        p.mkdir(mode=0o700, exist_ok=True)
        p.chmod(0o700)


def open_text(path: Path, mode: str) -> IO[str]:
    """A text file opened with `mode` ("a+", "w", …), created 0600."""
    flags = os.O_CREAT | (os.O_RDWR if "+" in mode else os.O_WRONLY)
    flags |= os.O_APPEND if "a" in mode else os.O_TRUNC if "w" in mode else 0
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, mode, encoding="utf-8")


def restrict_stdout() -> None:
    """Output redirected into a regular file of this user's (`agentmem export > FILE`) is
    made 0600: the shell created it with the umask's permissions."""
    try:
        fd = sys.stdout.fileno()
        st = os.fstat(fd)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
        os.fchmod(fd, 0o600)
