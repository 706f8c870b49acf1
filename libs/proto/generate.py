"""Regenerate the Python code of every .proto under protos/ into libs/proto/src/rummy/.

Usage (from anywhere)::

    .venv/bin/python libs/proto/generate.py           # rewrite libs/proto/src/rummy
    .venv/bin/python libs/proto/generate.py --check   # exit 1 if the committed code is stale

Uses the pinned grpcio-tools (root dev group) for ``*_pb2.py`` and ``*_pb2_grpc.py`` and
mypy-protobuf for ``*.pyi`` stubs. Inputs are passed in sorted order and every package directory
gets an empty ``__init__.py``, so the output depends only on the .proto files and the tool versions.
The generated tree is owned by this script: never edit it by hand.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROTO_ROOT = REPO / "protos"
OUT_ROOT = REPO / "libs" / "proto" / "src"
PACKAGE = "rummy"
_GRPC_TOOLS = importlib.util.find_spec("grpc_tools")
assert _GRPC_TOOLS is not None and _GRPC_TOOLS.origin, "grpcio-tools is not installed"
_WELL_KNOWN = Path(_GRPC_TOOLS.origin).parent / "_proto"  # google/protobuf/*.proto
_PLUGIN_DIR = Path(sys.executable).parent  # protoc-gen-mypy and protoc-gen-mypy_grpc live here
_SERVICE = re.compile(r"^service\s", re.MULTILINE)


def proto_files() -> list[Path]:
    """Every .proto under protos/, relative to it, sorted."""
    return sorted(p.relative_to(PROTO_ROOT) for p in PROTO_ROOT.rglob("*.proto"))


def generate_into(out: Path) -> None:
    """Run protoc and the plugins over every .proto, writing the ``rummy`` tree into ``out``.

    Raises RuntimeError if protoc fails.
    """
    files = proto_files()
    args = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--proto_path={PROTO_ROOT}",
        f"--proto_path={_WELL_KNOWN}",
        f"--plugin=protoc-gen-mypy={_PLUGIN_DIR / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={_PLUGIN_DIR / 'protoc-gen-mypy_grpc'}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p) for p in files),
    ]
    run = subprocess.run(args, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"protoc failed:\n{run.stdout}{run.stderr}")
    package_root = out / PACKAGE
    for proto in files:  # protos without a service need no (empty) gRPC module
        if not _SERVICE.search((PROTO_ROOT / proto).read_text()):
            stem = out / proto.with_suffix("")
            for suffix in (".py", ".pyi"):
                Path(f"{stem}_pb2_grpc{suffix}").unlink()
    for directory in [package_root, *sorted(p for p in package_root.rglob("*") if p.is_dir())]:
        (directory / "__init__.py").touch()
    (package_root / "py.typed").touch()


def _tree(root: Path) -> set[str]:
    if not root.exists():
        return set()
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def stale_files(fresh: Path, committed: Path) -> list[str]:
    """Paths (relative to the package root) differing, missing or extra in ``committed``."""
    fresh_files, committed_files = _tree(fresh), _tree(committed)
    differing = [
        name
        for name in sorted(fresh_files & committed_files)
        if not filecmp.cmp(fresh / name, committed / name, shallow=False)
    ]
    return sorted(set(differing) | (fresh_files ^ committed_files))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if libs/proto/src/rummy is stale"
    )
    opts = parser.parse_args(argv)
    committed = OUT_ROOT / PACKAGE
    with tempfile.TemporaryDirectory() as tmp:
        generate_into(Path(tmp))
        fresh = Path(tmp) / PACKAGE
        stale = stale_files(fresh, committed)
        if opts.check:
            if stale:
                print("stale generated code; run: .venv/bin/python libs/proto/generate.py")
                for name in stale:
                    print(f"  {name}")
                return 1
            print(f"generated protobuf code is up to date ({len(proto_files())} .proto files)")
            return 0
        if committed.exists():
            shutil.rmtree(committed)
        shutil.copytree(fresh, committed)
        print(f"generated {len(_tree(committed))} files from {len(proto_files())} .proto files")
        return 0


if __name__ == "__main__":
    sys.exit(main())
