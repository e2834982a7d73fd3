"""The README is a newcomer's page that links into a documentation site which builds
strictly (a broken link or anchor fails), and neither narrates how the project was made."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentmem_kernel import config
from tests.harness import ROOT

README = ROOT / "README.md"


def test_the_readme_is_a_short_page_with_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 400
    commands = re.findall(r"^make (\w+)", text, re.M)
    assert commands[:2] == ["run", "test"]
    assert set(commands) == {"run", "test"}  # exactly two set-up commands


def test_the_readmes_links_into_the_docs_resolve():
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README.read_text())
    assert links, "the README links into the documentation site"
    missing = sorted({link for link in links if not (ROOT / link).is_file()})
    assert not missing


def test_the_site_builds_strictly(tmp_path: Path):
    mkdocs = Path(sys.executable).with_name("mkdocs")
    if not mkdocs.exists() and shutil.which("mkdocs") is None:
        pytest.fail("mkdocs is missing: it is in the dev extra (make install)")
    done = subprocess.run(
        [str(mkdocs) if mkdocs.exists() else "mkdocs", "build", "--strict", "--site-dir", tmp_path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "architecture" / "index.html").is_file()
    assert (tmp_path / "benchmarks" / "index.html").is_file()


NARRATION = re.compile(
    r"session's machine|\b(first|second|third|fourth|fifth|sixth|seventh|next|last) session\b"
    r"|\b(this|previous|next|last) round\b|\bthe round's\b",
    re.I,
)


def test_docs_and_code_comments_do_not_narrate_how_they_were_made():
    files = [README, *ROOT.glob("docs/**/*.md")]
    for package in ("agentmem", "protocol_svc", "runtime_svc", "bench"):
        files += [p for p in (ROOT / package).rglob("*.py") if "/v1/" not in p.as_posix()]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if NARRATION.search(line)
    ]
    assert not found, "\n".join(found[:20])


def _keys(model: type, prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        kind = field.annotation
        inner = [a for a in getattr(kind, "__args__", ()) if isinstance(a, type)]
        nested = next(
            (t for t in (kind, *inner) if isinstance(t, type) and issubclass(t, BaseModel)), None
        )
        if nested is not None and name not in ("api_keys",):
            yield from _keys(nested, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}"


def test_the_configuration_reference_names_every_key():
    page = (ROOT / "docs/configuration.md").read_text()
    sections = re.split(r"^## ", page, flags=re.M)
    missing = []
    for key in _keys(config.Settings):
        section, *rest = key.split(".")
        body = next((s for s in sections if s.startswith(f"`{section}`")), "")
        leaf = ".".join(rest[-2:]) if rest[-2:-1] == ["passages"] else rest[-1]
        if f"`{leaf}`" not in body and f"`{leaf}," not in body and f", `{leaf}`" not in body:
            missing.append(key)
    assert not missing


def test_install_lines_name_the_distribution():
    """`agentmem` on the package index is another project: extras go on agentmem-service."""
    wrong = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in [README, *ROOT.glob("docs/**/*.md")]
        for line in path.read_text().splitlines()
        if re.search(r"(?<![-\w])agentmem\[", line)
    ]
    assert not wrong
