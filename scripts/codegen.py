"""Regenerates everything derived from protos/: Python code (with .pyi stubs) and JSON Schemas.

python scripts/codegen.py          # write into the repository
python scripts/codegen.py --check  # exit 1 and name the files when the checked-in copy is stale
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
GENERATED_PACKAGES = ["agentmem/v1", "agentmem_kernel/runtime/v1"]
SCHEMA_DIR = "schemas"


def generate(out: Path) -> None:
    from grpc_tools import protoc  # dev dependency, pinned in pyproject.toml

    include = str(Path(protoc.__file__).parent / "_proto")
    files = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    for package in GENERATED_PACKAGES:
        (out / package).mkdir(parents=True, exist_ok=True)
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        f"--descriptor_set_out={out / 'descriptors.binpb'}",
        "--include_imports",
        *files,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    for package in GENERATED_PACKAGES:
        (out / package / "__init__.py").write_text("")
    sys.path.insert(0, str(ROOT))
    from agentmem.contract import schema

    schema.write_from_descriptor_set((out / "descriptors.binpb").read_bytes(), out / SCHEMA_DIR)


def stale_files(generated: Path) -> list[str]:
    stale = []
    for folder in [*GENERATED_PACKAGES, SCHEMA_DIR]:
        new, old = generated / folder, ROOT / folder
        names = {p.name for p in new.iterdir()} | (
            {p.name for p in old.iterdir() if p.is_file() and p.suffix in {".py", ".pyi", ".json"}}
            if old.exists()
            else set()
        )
        for name in sorted(names):
            a, b = new / name, old / name
            if not (a.exists() and b.exists() and filecmp.cmp(a, b, shallow=False)):
                stale.append(f"{folder}/{name}")
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        generate(out)
        stale = stale_files(out)
        if args.check:
            if stale:
                print("stale generated files (run `make proto`):", *stale, sep="\n  ")
                return 1
            print("generated code and schemas are up to date")
            return 0
        for folder in [*GENERATED_PACKAGES, SCHEMA_DIR]:
            target = ROOT / folder
            if target.exists():
                for p in target.iterdir():
                    if p.is_file() and p.suffix in {".py", ".pyi", ".json"}:
                        p.unlink()
            target.mkdir(parents=True, exist_ok=True)
            for p in (out / folder).iterdir():
                shutil.copy2(p, target / p.name)
        print(f"regenerated {len(stale)} changed file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
