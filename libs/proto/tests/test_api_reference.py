"""The committed API reference (docs/api/) is what libs/proto/api_reference.py writes from
protos/ now, and it names every service, RPC, message, enum, value and field with its comment."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf import descriptor_pb2

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "libs" / "proto" / "api_reference.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference() -> tuple[descriptor_pb2.FileDescriptorSet, dict[str, str]]:
    script = _script()
    files = script.descriptor_set()
    return files, script.render(files)


def test_the_committed_api_reference_is_not_stale() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_package_has_a_page_linked_from_the_index(
    reference: tuple[descriptor_pb2.FileDescriptorSet, dict[str, str]],
) -> None:
    files, pages = reference
    packages = {file.package for file in files.file}
    assert set(pages) == {"README.md", *(f"{p}.md" for p in packages)}
    for package in packages:
        assert f"[`{package}`]({package}.md)" in pages["README.md"]


def test_every_service_rpc_message_enum_and_field_is_on_its_package_page(
    reference: tuple[descriptor_pb2.FileDescriptorSet, dict[str, str]],
) -> None:
    files, pages = reference

    def messages(
        message: descriptor_pb2.DescriptorProto, parent: str
    ) -> list[tuple[str, descriptor_pb2.DescriptorProto]]:
        name = f"{parent}{message.name}"
        found = [(name, message)]
        for nested in message.nested_type:
            if not nested.options.map_entry:
                found += messages(nested, f"{name}.")
        return found

    for file in files.file:
        page = pages[f"{file.package}.md"]
        for service in file.service:
            assert f"### `{service.name}`" in page
            for method in service.method:
                assert f"| `{method.name}` |" in page, (service.name, method.name)
        for top in file.message_type:
            for name, message in messages(top, ""):
                assert f"### `{name}`" in page
                for field in message.field:
                    assert f"| `{field.name}` | {field.number} |" in page, (name, field.name)
        for enum in file.enum_type:
            assert f"### `{enum.name}`" in page
            for value in enum.value:
                assert f"| `{value.name}` | {value.number} |" in page


def test_comments_come_from_the_protos_and_types_link_across_pages(
    reference: tuple[descriptor_pb2.FileDescriptorSet, dict[str, str]],
) -> None:
    _, pages = reference
    ledger = pages["rummy.ledger.v1.md"]
    # GetBalanceRequest.account_id's trailing comment in ledger_service.proto
    assert "| `account_id` | 1 | `string` | empty = the caller's account; at most 128 bytes |" in (
        ledger
    )
    table = pages["rummy.table.v1.md"]
    # a leading RPC comment, and a type of another package linked to its page's section
    assert "| `OpenTable` | [`OpenTableRequest`](#opentablerequest) |" in table
    assert "Operator only." in table
    assert "[`rummy.common.v1.RuleSet`](rummy.common.v1.md#ruleset)" in table
    assert "stream [`WatchTableResponse`](#watchtableresponse)" in table


def test_nested_messages_maps_optionals_and_streams_render_with_their_comments(
    tmp_path: Path,
) -> None:
    (tmp_path / "demo.proto").write_text(
        "// The demo file.\n"
        'syntax = "proto3";\n'
        "package rummy.demo.v1;\n"
        "service DemoService {\n"
        "  // Both ways.\n"
        "  rpc Chat(stream Outer) returns (stream Outer);\n"
        "}\n"
        "// The outer one: a <b> & c.\n"
        "message Outer {\n"
        "  // Nested, with a value.\n"
        "  message Inner {\n"
        "    uint32 points = 1;  // points won\n"
        "  }\n"
        "  map<string, Inner> by_seat = 1;  // keyed by seat\n"
        "  optional int64 net_hundredths = 2;\n"
        "  repeated Inner inners = 3;\n"
        "}\n",
        encoding="utf-8",
    )
    out = tmp_path / "set.binpb"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={tmp_path}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            "demo.proto",
        ],
        check=True,
    )
    page = _script().render(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()))[
        "rummy.demo.v1.md"
    ]
    assert "The demo file." in page
    assert "| `Chat` | stream [`Outer`](#outer) | stream [`Outer`](#outer) | Both ways. |" in page
    assert "The outer one: a &lt;b> &amp; c." in page
    assert "### `Outer.Inner`" in page and "Nested, with a value." in page
    assert "### `Outer.ByseatEntry`" not in page and "### `Outer.BySeatEntry`" not in page
    assert (
        "| `by_seat` | 1 | map&lt;`string`, [`Outer.Inner`](#outerinner)&gt; | keyed by seat |"
        in page
    )
    assert "| `net_hundredths` | 2 | optional `int64` |  |" in page
    assert "| `inners` | 3 | repeated [`Outer.Inner`](#outerinner) |  |" in page
    assert "One of" not in page  # proto3 optional's synthetic oneof is not shown
    assert "| `points` | 1 | `uint32` | points won |" in page
