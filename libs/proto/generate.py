"""Regenerate the Python code of every .proto under protos/ into libs/proto/src/rummy/.

Usage (from anywhere)::

    .venv/bin/python libs/proto/generate.py           # rewrite libs/proto/src/rummy
    .venv/bin/python libs/proto/generate.py --check   # exit 1 if the committed code is stale

Uses the pinned grpcio-tools (root dev group) for ``*_pb2.py`` and ``*_pb2_grpc.py`` and
mypy-protobuf for ``*.pyi`` stubs. Inputs are passed in sorted order and every package directory
gets an empty ``__init__.py``, so the output depends only on the .proto files and the tool versions.
The generated tree is owned by this script: never edit it by hand.

Test-only protos (``TEST_PROTOS``: the test suite's toy variant) are generated beside their
.proto (``tests/support/toy_variant/toy_pb2.py``), against protos/ for their imports, and checked
the same way.
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
#: Test-only protos: (the root they are named from, their path under it).
TEST_PROTOS = [(REPO / "tests" / "support", Path("toy_variant/toy.proto"))]


def _protoc(proto_path: list[Path], out: Path, files: list[Path], grpc: bool) -> None:
    args = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        *(f"--proto_path={p}" for p in proto_path),
        f"--proto_path={_WELL_KNOWN}",
        f"--plugin=protoc-gen-mypy={_PLUGIN_DIR / 'protoc-gen-mypy'}",
        f"--python_out={out}",
        f"--mypy_out={out}",
    ]
    if grpc:
        args += [
            f"--plugin=protoc-gen-mypy_grpc={_PLUGIN_DIR / 'protoc-gen-mypy_grpc'}",
            f"--grpc_python_out={out}",
            f"--mypy_grpc_out={out}",
        ]
    run = subprocess.run([*args, *(str(p) for p in files)], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"protoc failed:\n{run.stdout}{run.stderr}")


def test_outputs(proto: Path) -> list[Path]:
    """The generated files of a test-only proto, relative to its root."""
    stem = proto.with_suffix("")
    return [Path(f"{stem}_pb2.py"), Path(f"{stem}_pb2.pyi")]


def generate_test_protos(out: Path) -> None:
    """Generate every test-only proto into ``out`` (relative to its root)."""
    for root, proto in TEST_PROTOS:
        _protoc([root, PROTO_ROOT], out, [proto], grpc=False)


def stale_test_files(fresh: Path) -> list[str]:
    """Test-only generated files differing from or missing beside their .proto."""
    stale = []
    for root, proto in TEST_PROTOS:
        for name in test_outputs(proto):
            committed = root / name
            if not committed.exists() or not filecmp.cmp(fresh / name, committed, shallow=False):
                stale.append(str(committed.relative_to(REPO)))
    return stale


def proto_files() -> list[Path]:
    """Every .proto under protos/, relative to it, sorted."""
    return sorted(p.relative_to(PROTO_ROOT) for p in PROTO_ROOT.rglob("*.proto"))


def generate_into(out: Path) -> None:
    """Run protoc and the plugins over every .proto, writing the ``rummy`` tree into ``out``.

    Raises RuntimeError if protoc fails.
    """
    files = proto_files()
    _protoc([PROTO_ROOT], out, files, grpc=True)
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
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tests_tmp:
        generate_into(Path(tmp))
        generate_test_protos(Path(tests_tmp))
        fresh = Path(tmp) / PACKAGE
        stale = stale_files(fresh, committed)
        stale_tests = stale_test_files(Path(tests_tmp))
        if opts.check:
            if stale or stale_tests:
                print("stale generated code; run: .venv/bin/python libs/proto/generate.py")
                for name in [*stale, *stale_tests]:
                    print(f"  {name}")
                return 1
            print(f"generated protobuf code is up to date ({len(proto_files())} .proto files)")
            return 0
        if committed.exists():
            shutil.rmtree(committed)
        shutil.copytree(fresh, committed)
        for root, proto in TEST_PROTOS:
            for output in test_outputs(proto):
                shutil.copyfile(Path(tests_tmp) / output, root / output)
        print(f"generated {len(_tree(committed))} files from {len(proto_files())} .proto files")
        return 0


if __name__ == "__main__":
    sys.exit(main())
