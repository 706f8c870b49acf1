"""The request limits of rummy_platform.limits: every string, bytes and repeated field of every
request of every service has a limit, stated in its .proto comment; a field over it is named with
its size and the limit, never echoed; page tokens are parsed strictly."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from rummy.clock.v1 import clock_service_pb2
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import dealer_service_pb2
from rummy.fairness.v1 import fairness_service_pb2
from rummy.ledger.v1 import ledger_service_pb2
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import InvalidArgument
from rummy_platform.limits import (
    check_request,
    field_limits,
    parse_id_token,
    parse_position_token,
)

PROTOS = Path(__file__).resolve().parents[3] / "protos"
SERVICE_MODULES = (
    api,
    ledger_service_pb2,
    fairness_service_pb2,
    clock_service_pb2,
    dealer_service_pb2,
)
_SIZED = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)


def request_fields() -> Iterator[tuple[Descriptor, FieldDescriptor]]:
    """Every (message, field) reachable from a request of a rummy service whose size needs a
    limit: strings, bytes and repeated fields, nested messages included."""
    seen: set[str] = set()
    pending = [
        method.input_type
        for module in SERVICE_MODULES
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]
    while pending:
        message = pending.pop()
        if message.full_name in seen or message.full_name.startswith("google.protobuf."):
            continue
        seen.add(message.full_name)
        for field in message.fields:
            if field.is_repeated or field.type in _SIZED:
                yield message, field
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                pending.append(field.message_type)


def proto_comment(message: Descriptor, field: FieldDescriptor) -> str:
    """The field's line in its .proto file and the comment lines just above it."""
    lines = (PROTOS / message.file.name).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"message {message.name} {{"))
    pattern = re.compile(
        rf"\s+(repeated\s+|optional\s+)?[\w.]+\s+{field.name}\s+=\s+{field.number};"
    )
    at = next(i for i in range(start, len(lines)) if pattern.match(lines[i]))
    above = at
    while above > start and lines[above - 1].strip().startswith("//"):
        above -= 1
    return "\n".join(lines[above : at + 1])


def test_every_string_bytes_and_repeated_field_of_every_request_has_a_documented_limit() -> None:
    fields = list(request_fields())
    assert len(fields) > 30  # the walk reached the requests of every service
    limits = field_limits()  # the hosts' and the installed variants'
    for message, field in fields:
        assert field.name in limits, f"{message.full_name}.{field.name} has no limit"
        limit = limits[field.name]
        comment = proto_comment(message, field)
        assert f"at most {limit}" in comment, (
            f"{message.full_name}.{field.name}: its .proto comment does not state its limit "
            f"({limit}): {comment!r}"
        )


def test_a_field_over_its_limit_is_named_with_its_size_and_the_limit_but_never_echoed() -> None:
    request = api.TakeSeatRequest(table_id="t", client_request_id="x" * 500_000)
    with pytest.raises(InvalidArgument) as error:
        check_request(request)
    message = str(error.value)
    assert message == "client_request_id is 500000 bytes long; at most 64 bytes are allowed"


def test_a_string_is_measured_in_utf8_bytes_and_a_limit_is_inclusive() -> None:
    check_request(api.OpenTableRequest(name="€" * 21))  # 63 bytes
    check_request(api.OpenTableRequest(name="n" * 64))
    with pytest.raises(InvalidArgument, match="name is 66 bytes long; at most 64"):
        check_request(api.OpenTableRequest(name="€" * 22))


def test_nested_and_repeated_fields_are_checked_with_their_path() -> None:
    declare = api.DeclareRequest()
    group = declare.groups.add()
    group.cards.add(index=1, face="x" * 9)
    with pytest.raises(InvalidArgument, match=r"groups\[0\]\.cards\[0\]\.face is 9 bytes"):
        check_request(declare)
    group.cards[0].face = "10S"
    group.cards.extend(cards_pb2.Card(index=i) for i in range(14))
    with pytest.raises(InvalidArgument, match=r"groups\[0\]\.cards has 15 items; at most 14"):
        check_request(declare)
    del group.cards[1:]
    for _ in range(13):
        declare.groups.add()
    with pytest.raises(InvalidArgument, match="groups has 14 items; at most 13"):
        check_request(declare)
    seed = api.ContributeSeedRequest(client_seed=b"\x00" * 65)
    with pytest.raises(InvalidArgument, match="client_seed is 65 bytes"):
        check_request(seed)


@pytest.mark.parametrize(
    "forged",
    ["9" * 30, "9" * 5000, "²", "-1", "+1", "0", "01", " 1", "1 ", "1_000", "١٢", str(2**63)],
)
def test_a_position_page_token_is_a_positive_int64_in_ascii_digits_only(forged: str) -> None:
    with pytest.raises(InvalidArgument, match="page_token is not a next_page_token") as error:
        parse_position_token(forged)
    assert forged not in str(error.value)


def test_a_position_page_token_reads_back_the_position_handed_out() -> None:
    assert parse_position_token("") is None
    assert parse_position_token("42") == 42
    assert parse_position_token(str(2**63 - 1)) == 2**63 - 1


def test_an_id_page_token_is_a_canonical_uuid() -> None:
    token = "2a7c1f4e-5b0d-4c36-9e8a-7d1b3f6a9c20"
    assert parse_id_token("") is None
    assert parse_id_token(token) == token
    for forged in (token.upper(), "{" + token + "}", token.replace("-", ""), "x", "9" * 30):
        with pytest.raises(InvalidArgument, match="not a next_page_token"):
            parse_id_token(forged)


@pytest.mark.parametrize(
    "request_",
    [
        ledger_service_pb2.GetBalanceRequest(account_id="a\x00b"),
        ledger_service_pb2.GrantRequest(account_id="p", idempotency_key="\x00"),
        fairness_service_pb2.GetProofRequest(hand_id="h\x00"),
        api.OpenTableRequest(client_request_id="r", name="n\x00"),
    ],
    ids=["account_id", "idempotency_key", "hand_id", "name"],
)
def test_a_nul_character_in_any_string_field_is_invalid_and_never_echoed(
    request_: Message,
) -> None:
    # PostgreSQL text cannot hold U+0000: such an id reached the database and answered INTERNAL.
    with pytest.raises(InvalidArgument, match=r"contains a NUL character \(U\+0000\)") as error:
        check_request(request_)
    assert "\x00" not in str(error.value)


def test_nul_bytes_in_a_bytes_field_are_allowed() -> None:
    check_request(api.ContributeSeedRequest(client_seed=b"\x00" * 32))
