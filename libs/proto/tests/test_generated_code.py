"""The committed generated code matches protos/, imports by package path, and follows the naming
conventions (rummy.<area>.v1, <Area>Service, VerbNoun RPCs with <Rpc>Request/<Rpc>Response,
enum zero values *_UNSPECIFIED)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf.descriptor import FileDescriptor

from rummy_game.bundle import bundles

REPO = Path(__file__).resolve().parents[3]
SERVICE_AREAS = ("common", "table", "ledger", "fairness", "dealer", "clock")
#: A variant's own messages (its options, commands and events): a package per installed variant
#: bundle (the area of its payload modules, ``rummy.<area>.v1``), no service.
VARIANT_AREAS = tuple(
    sorted({m.__name__.split(".")[1] for b in bundles() for m in b.payload_modules})
)
#: The layer above variants: match formats (docs/rules/formats.md), a package without a service.
FORMAT_AREAS = ("match",)


def _modules() -> list[FileDescriptor]:
    files = sorted((REPO / "protos").rglob("*.proto"))
    names = [".".join(p.relative_to(REPO / "protos").with_suffix("").parts) + "_pb2" for p in files]
    return [importlib.import_module(name).DESCRIPTOR for name in names]


def test_the_committed_generated_code_is_not_stale() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "libs/proto/generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("descriptor", _modules(), ids=lambda d: d.name)
def test_every_proto_follows_the_package_and_naming_conventions(descriptor: FileDescriptor) -> None:
    area = descriptor.name.split("/")[1]
    assert area in SERVICE_AREAS + VARIANT_AREAS + FORMAT_AREAS
    assert descriptor.package == f"rummy.{area}.v1"
    if area in VARIANT_AREAS + FORMAT_AREAS:
        assert not descriptor.services_by_name, "a variant's or formats' package: no service"
    for enum in descriptor.enum_types_by_name.values():
        assert enum.values_by_number[0].name.endswith("_UNSPECIFIED"), enum.full_name
    for service in descriptor.services_by_name.values():
        assert service.name == f"{area.capitalize()}Service"
        for method in service.methods:
            assert method.input_type.name == f"{method.name}Request"
            assert method.output_type.name == f"{method.name}Response"
