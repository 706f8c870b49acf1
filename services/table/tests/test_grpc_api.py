"""The gRPC API in-process (the real ServiceHost with its auth and error interceptors) over the
in-memory event log: who may call what, status codes, and what a watch shows."""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

import grpc
import pytest
import table_calls
from google.protobuf.message import Message
from prometheus_client.parser import text_string_to_metric_families
from served_table import code_of, served_table, served_table_and_servicer, stub
from world import SERVER_SEED, World

from rummy.common.v1 import cards_pb2
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_game import stream_payloads
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import TopicPartition
from rummy_platform.limits import open_channel
from rummy_platform.server import ServiceHost
from rummy_platform.topics import FAIRNESS_EVENTS, LEDGER_EVENTS, TABLE_EVENTS
from rummy_rules.indian.rules import IndianPointsRules, bombay_baazi
from rummy_table.entrypoints import grpc as grpc_adapter
from rummy_testing.token_keys import issuer_authority

SERVICE = grpc_adapter.SERVICE_NAME


@pytest.fixture
def served() -> Iterator[tuple[World, ServiceHost]]:
    with served_table(World()) as served:
        yield served


def hand_on_turn(world: World) -> tuple[str, str, api.PlayerView, str]:
    """A table where alice and bob play a dealt hand: its id, the hand id, the public view and
    the account on turn."""
    table_id = world.open_table()
    world.sit(table_id, "alice")
    world.sit(table_id, "bob")
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    view = world.view(table_id, None)
    who = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
    return table_id, hand_id, view, who


def test_only_an_operator_opens_tables_and_only_players_take_seats(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    player, operator = stub(host, "alice", Role.PLAYER), stub(host, "op", Role.OPERATOR)
    request = api.OpenTableRequest(client_request_id="o1", seat_count=4)
    assert code_of(lambda: player.OpenTable(request)) == grpc.StatusCode.PERMISSION_DENIED
    table_id = operator.OpenTable(request).table_id
    sit = api.TakeSeatRequest(table_id=table_id, client_request_id="s1")
    assert code_of(lambda: operator.TakeSeat(sit)) == grpc.StatusCode.PERMISSION_DENIED
    assert player.TakeSeat(sit).seat == 0
    assert [t.table_id for t in player.ListTables(api.ListTablesRequest()).tables] == [table_id]


def test_a_table_opened_with_no_options_plays_the_whole_bombay_baazi_rule_set(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    operator = stub(host, "op", Role.OPERATOR)
    request = api.OpenTableRequest(
        client_request_id="o1", seat_count=6, point_value_hundredths=10, commission_bps=1000
    )
    assert not request.HasField("rule_set")
    table_id = operator.OpenTable(request).table_id
    house = bombay_baazi(6, 10, 1000)
    rules = world.app.projection.tables[table_id].rule_set
    assert rules == house
    indian = rules.options
    assert isinstance(indian, IndianPointsRules)
    assert (indian.first_drop_points, indian.middle_drop_points, indian.wrong_declare_points) == (
        20,
        40,
        80,
    )
    assert indian.points_cap is None and rules.max_loss_points == 130
    assert indian.meld_options.jokers_only_group_is_sequence
    assert indian.meld_options.strict_duplicate_faces and indian.meld_options.ace_high
    assert indian.no_discard_of_card_taken_from_pile
    assert (rules.variant, rules.max_missed_turns, rules.turn_seconds) == ("indian-points", 3, 30)
    assert (rules.seed_window_seconds, rules.hand_size, rules.min_players) == (5, 13, 2)
    assert (rules.shoe.decks, rules.shoe.printed_jokers) == (2, 2)
    # The record says every option, so replaying it never depends on what a default was.
    opened = world.log.read_stream(TABLE_EVENTS, table_id)[0].envelope.payload
    assert isinstance(opened, pb.TableOpened)
    recorded = opened.rule_set
    assert recorded == stream_payloads.rule_set_to_pb(house, 5)
    any_field: Message = recorded  # HasField by a descriptor's name (the stubs list literals)
    assert all(
        any_field.HasField(f.name)
        for f in recorded.DESCRIPTOR.fields
        if f.has_presence and f.containing_oneof is None
    )
    assert recorded.WhichOneof("variant_options") == "indian_points"
    (summary,) = operator.ListTables(api.ListTablesRequest()).tables
    assert (summary.variant, summary.turn_seconds, summary.start_delay_seconds) == (
        "indian-points",
        30,
        5,
    )
    # Its hands are dealt under the same rules.
    for account in ("alice", "bob"):
        world.sit(table_id, account)
    world.start_hand(table_id)
    (started,) = [
        r.envelope.payload
        for r in world.log.read_stream(TABLE_EVENTS, table_id)
        if isinstance(r.envelope.payload, pb.HandStarted)
    ]
    assert stream_payloads.hand_context(started).rule_set == house


def test_a_call_without_a_token_is_unauthenticated(served: tuple[World, ServiceHost]) -> None:
    _, host = served
    bare = api_grpc.TableServiceStub(grpc.insecure_channel(host.address))
    assert (
        code_of(lambda: bare.ListTables(api.ListTablesRequest())) == grpc.StatusCode.UNAUTHENTICATED
    )


def test_a_stale_turn_is_failed_precondition_and_an_unknown_table_not_found(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, hand_id, view, who = hand_on_turn(world)
    draw = api.DrawCardRequest(
        table_id=table_id,
        hand_id=hand_id,
        turn_no=view.turn_no + 1,
        client_request_id="d1",
        source=pb.DRAW_SOURCE_STOCK,
    )
    player = stub(host, who, Role.PLAYER)
    assert code_of(lambda: player.DrawCard(draw)) == grpc.StatusCode.FAILED_PRECONDITION
    watch = api.WatchTableRequest(table_id="nope")
    assert code_of(lambda: next(iter(player.WatchTable(watch)))) == grpc.StatusCode.NOT_FOUND


def test_a_watch_shows_only_the_callers_cards_then_follows_changes_and_ends_at_shutdown(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, _, _, _ = hand_on_turn(world)
    alice_cards = {c.index for c in world.view(table_id, "alice").my_cards}
    stream = stub(host, "bob", Role.PLAYER).WatchTable(api.WatchTableRequest(table_id=table_id))
    first = next(stream).view
    assert len(first.my_cards) == 13 and not alice_cards & {c.index for c in first.my_cards}
    world.sit(table_id, "carol")
    assert next(stream).view.stream_version == first.stream_version + 1
    host.stop(grace_seconds=5)
    assert list(stream) == []  # the stream ends cleanly at shutdown


# -- watches (issue 19) ------------------------------------------------------------------------


def test_an_account_holds_at_most_its_bound_of_watches_and_an_ended_one_frees_its_place(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    tables = [world.open_table() for _ in range(3)]
    alice = stub(host, "alice", Role.PLAYER)
    first, second = (alice.WatchTable(api.WatchTableRequest(table_id=t)) for t in tables[:2])
    next(first), next(second)
    third = alice.WatchTable(api.WatchTableRequest(table_id=tables[2]))
    error = rpc_error(lambda: next(third))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "at most 2 tables" in (error.details() or "")
    bob = stub(host, "bob", Role.PLAYER).WatchTable(api.WatchTableRequest(table_id=tables[2]))
    assert next(bob).view.table_id == tables[2]  # another account is not held back

    first.cancel()  # released at once, without waiting for a change of its table
    deadline = time.monotonic() + 2
    while True:
        again = alice.WatchTable(api.WatchTableRequest(table_id=tables[2]))
        try:
            assert next(again).view.table_id == tables[2]
            break
        except grpc.RpcError as refused:
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert time.monotonic() < deadline, "the cancelled watch still counts"
            time.sleep(0.05)


def test_a_watch_resumed_after_the_last_version_seen_gets_the_changes_it_missed() -> None:
    with served_table_and_servicer(World()) as (world, host, servicer):

        def released() -> None:
            """Wait until the server has ended alice's cancelled streams (it learns of a cancel
            asynchronously; the test of the watch limit bounds how soon)."""
            deadline = time.monotonic() + 10
            while servicer.watches_held("alice"):
                assert time.monotonic() < deadline, "a cancelled watch still counts"
                time.sleep(0.02)

        table_id = world.open_table()
        alice = stub(host, "alice", Role.PLAYER)
        stream = alice.WatchTable(api.WatchTableRequest(table_id=table_id))
        seen = next(stream).view.stream_version
        stream.cancel()
        world.sit(table_id, "bob")  # changes while alice is away
        world.sit(table_id, "carol")

        resumed = alice.WatchTable(
            api.WatchTableRequest(table_id=table_id, after_stream_version=seen)
        )
        view = next(resumed).view
        assert view.stream_version == seen + 2
        assert [s.account_id for s in view.seats] == ["bob", "carol"]
        resumed.cancel()
        released()  # alice may hold two streams; this test opens a third and a fourth

        # resuming at the latest version waits for the next change, then sends it
        current = alice.WatchTable(
            api.WatchTableRequest(table_id=table_id, after_stream_version=view.stream_version)
        )
        world.sit(table_id, "dave")
        assert next(current).view.stream_version == view.stream_version + 1
        current.cancel()
        released()
        beyond = alice.WatchTable(
            api.WatchTableRequest(table_id=table_id, after_stream_version=view.stream_version + 9)
        )
        error = rpc_error(lambda: next(beyond))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "beyond the table's version" in (error.details() or "")


# -- request limits (issue 12, repros 3, 4 and 7) ---------------------------------------------


def appended(world: World) -> int:
    """How many table events the log holds (every partition's end offset)."""
    partitions = [TopicPartition(TABLE_EVENTS, p) for p in range(2)]
    return sum(world.log.end_offsets(partitions).values())


def rpc_error(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value


def test_an_oversized_request_id_or_name_is_invalid_argument_naming_the_field_not_echoing_it(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = world.open_table()
    before = appended(world)
    player, operator = stub(host, "alice", Role.PLAYER), stub(host, "op", Role.OPERATOR)
    long_id = "r" * 1000
    error = rpc_error(
        lambda: player.TakeSeat(api.TakeSeatRequest(table_id=table_id, client_request_id=long_id))
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert "client_request_id is 1000 bytes" in details and "64" in details
    assert "rrrrrrrr" not in details
    name = "€" * 22  # 66 bytes in UTF-8
    opened = api.OpenTableRequest(client_request_id="o-long", seat_count=4, name=name)
    error = rpc_error(lambda: operator.OpenTable(opened))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.details() or ""
    assert "name is 66 bytes" in details and "€" not in details
    assert appended(world) == before
    assert [t.table_id for t in operator.ListTables(api.ListTablesRequest()).tables] == [table_id]


def test_a_declare_with_too_many_groups_or_cards_in_a_group_is_invalid_argument(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = world.open_table()
    player = stub(host, "alice", Role.PLAYER)
    declare = api.DeclareRequest(table_id=table_id, hand_id="h", client_request_id="d")
    declare.groups.add().cards.extend(cards_pb2.Card(index=i) for i in range(15))
    error = rpc_error(lambda: player.Declare(declare))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "groups[0].cards has 15 items" in (error.details() or "")
    del declare.groups[:]
    for _ in range(14):
        declare.groups.add()
    assert rpc_error(lambda: player.Declare(declare)).code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_request_over_the_message_limit_is_resource_exhausted_never_internal(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id = world.open_table()
    before = appended(world)
    token = issuer_authority().issue("alice", Role.PLAYER)
    huge = api.TakeSeatRequest(table_id=table_id, client_request_id="x" * 1_100_000)
    for channel in (grpc.insecure_channel(host.address), open_channel(host.address)):
        player = api_grpc.TableServiceStub(authorized_channel(channel, token))
        assert rpc_error(partial(player.TakeSeat, huge)).code() == (
            grpc.StatusCode.RESOURCE_EXHAUSTED
        )
    assert appended(world) == before


def test_a_request_that_cannot_be_parsed_is_invalid_argument(
    served: tuple[World, ServiceHost],
) -> None:
    _, host = served
    token = issuer_authority().issue("alice", Role.PLAYER)
    channel = authorized_channel(grpc.insecure_channel(host.address), token)
    take_seat: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        "/rummy.table.v1.TableService/TakeSeat"
    )
    not_utf8 = b"\x0a\x02\xff\xfe"  # field 1 (table_id), a string of two bytes that are no UTF-8
    error = rpc_error(lambda: take_seat(not_utf8))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_list_tables_pages_and_refuses_a_forged_page_token(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    opened = sorted(world.open_table() for _ in range(3))
    reader = stub(host, "alice", Role.PLAYER)
    first = reader.ListTables(api.ListTablesRequest(page_size=2))
    assert [t.table_id for t in first.tables] == opened[:2]
    rest = reader.ListTables(api.ListTablesRequest(page_token=first.next_page_token))
    assert [t.table_id for t in rest.tables] == opened[2:] and rest.next_page_token == ""
    for forged in ("9" * 30, "²", opened[0].upper(), " " + opened[0]):
        request = api.ListTablesRequest(page_token=forged)
        assert code_of(partial(reader.ListTables, request)) == grpc.StatusCode.INVALID_ARGUMENT


def test_a_discard_with_the_request_id_of_an_earlier_draw_is_already_exists(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, hand_id, view, who = hand_on_turn(world)
    player = stub(host, who, Role.PLAYER)
    drawn = player.DrawCard(
        api.DrawCardRequest(
            table_id=table_id,
            hand_id=hand_id,
            turn_no=view.turn_no,
            client_request_id="same-id",
            source=pb.DRAW_SOURCE_STOCK,
        )
    ).card
    before = appended(world)
    discard = api.DiscardCardRequest(
        table_id=table_id,
        hand_id=hand_id,
        turn_no=view.turn_no,
        client_request_id="same-id",
        card=drawn,
    )
    error = rpc_error(lambda: player.DiscardCard(discard))
    assert error.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "was used for a different request" in (error.details() or "")
    assert appended(world) == before
    assert len(world.view(table_id, who).my_cards) == 14


def metric_samples(host: ServiceHost, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The samples of ``name`` on the host's /metrics page, by their sorted labels."""
    assert host.metrics_port is not None
    url = f"http://127.0.0.1:{host.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as page:
        text = page.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                samples[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def test_a_watch_abandoned_by_a_client_that_exits_is_counted_cancelled_not_internal(
    served: tuple[World, ServiceHost], caplog: pytest.LogCaptureFixture
) -> None:
    world, host = served
    table_id = world.open_table()
    token = issuer_authority().issue("alice", Role.PLAYER)
    client = (
        "import os, grpc\n"
        "from rummy.table.v1 import table_service_pb2 as api\n"
        "from rummy.table.v1 import table_service_pb2_grpc as api_grpc\n"
        "from rummy_platform.auth import authorized_channel\n"
        f"channel = authorized_channel(grpc.insecure_channel({host.address!r}), {token!r})\n"
        "stream = api_grpc.TableServiceStub(channel).WatchTable(\n"
        f"    api.WatchTableRequest(table_id={table_id!r}))\n"
        "next(stream)\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", client], check=True, timeout=60)
    labels = (("code", "CANCELLED"), ("method", "WatchTable"), ("service", SERVICE))
    deadline = time.monotonic() + 10
    while metric_samples(host, "grpc_requests_total").get(labels) != 1.0:
        world.sit(table_id, "bob")  # a change wakes the stream, which finds its client gone
        table_calls.leave_table(
            world.app,
            "bob",
            api.LeaveTableRequest(table_id=table_id, client_request_id=world.request_id()),
        )
        assert time.monotonic() < deadline, metric_samples(host, "grpc_requests_total")
        time.sleep(0.3)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# -- a table's options: the rules' one validation ------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"first_drop_points": 150},
            "rule_set.first_drop_points must be 0..130 (no more than the 130 points 13 cards can "
            "count, which the reservation is made for), got 150",
        ),
        ({"middle_drop_points": 131}, "rule_set.middle_drop_points must be 0..130"),
        ({"wrong_declare_points": 4_000_000_000}, "rule_set.wrong_declare_points must be 0..130"),
        ({"max_points": 60}, "rule_set.wrong_declare_points must be 0..60"),
        ({"max_points": 60, "wrong_declare_points": 60, "middle_drop_points": 61}, "0..60"),
        ({"max_points": 131}, "rule_set.max_points must be 1..130"),
        ({"turn_seconds": 3601}, "rule_set.turn_seconds must be 1..3600, got 3601"),
        ({"seed_window_seconds": 601}, "rule_set.seed_window_seconds must be 1..600"),
        ({"start_delay_seconds": 86_400}, "rule_set.start_delay_seconds must be 0..3600"),
        ({"max_missed_turns": 11}, "rule_set.max_missed_turns must be 1..10"),
        (
            {"variant": "no-such-game"},
            "rule_set.variant must be a variant played here ('gin', 'indian-points'",
        ),
    ],
)
def test_an_option_out_of_its_bounds_is_invalid_argument_naming_it_and_appends_nothing(
    served: tuple[World, ServiceHost], options: dict[str, Any], message: str
) -> None:
    # Repro 1 of issue 12: first_drop_points=150 was accepted, reserved and settled at 150, and
    # the ledger refused the settlement (its own 130 cap), leaving both reservations held.
    world, host = served
    operator = stub(host, "op", Role.OPERATOR)
    before = appended(world)
    request = api.OpenTableRequest(
        client_request_id="bad-options",
        seat_count=4,
        point_value_hundredths=100,
        rule_set=cards_pb2.RuleSet(**options),
    )
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = error.value.details() or ""
    assert message in details
    assert len(details) < 300  # never echoes an oversized input
    assert appended(world) == before
    assert operator.ListTables(api.ListTablesRequest()).tables == []


@pytest.mark.parametrize("point_value", [2**62, 2**63 - 1, 769_231, -1])
def test_a_point_value_whose_reservation_overflows_or_exceeds_the_maximum_is_invalid_argument(
    served: tuple[World, ServiceHost], point_value: int
) -> None:
    # Repro 2 (its option half): point values of 2^62 and 2^63-1 were accepted and the
    # reservation overflowed int64. 769,231 x 130 exceeds the default maximum reservation of
    # 100,000,000 hundredths (1,000,000 House Tokens).
    world, host = served
    operator = stub(host, "op", Role.OPERATOR)
    before = appended(world)
    request = api.OpenTableRequest(
        client_request_id=f"pv-{point_value}", seat_count=8, point_value_hundredths=point_value
    )
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "point_value_hundredths must be 0.." in (error.value.details() or "")
    assert appended(world) == before


def test_options_at_their_bounds_open_a_table(served: tuple[World, ServiceHost]) -> None:
    world, host = served
    operator = stub(host, "op", Role.OPERATOR)
    rule_set = cards_pb2.RuleSet(
        first_drop_points=130,
        middle_drop_points=130,
        wrong_declare_points=130,
        turn_seconds=3600,
        seed_window_seconds=600,
        start_delay_seconds=3600,
        max_missed_turns=10,
    )
    request = api.OpenTableRequest(
        client_request_id="edge",
        seat_count=8,
        point_value_hundredths=769_230,
        commission_bps=10_000,
        rule_set=rule_set,
    )
    table_id = operator.OpenTable(request).table_id
    (summary,) = operator.ListTables(api.ListTablesRequest()).tables
    assert (summary.table_id, summary.point_value_hundredths) == (table_id, 769_230)


def test_a_configured_maximum_reservation_bounds_the_point_value(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    world.app.max_reservation_hundredths = 13_000  # 100 hundredths a point at 130 points
    operator = stub(host, "op", Role.OPERATOR)
    ok = api.OpenTableRequest(client_request_id="a", seat_count=4, point_value_hundredths=100)
    operator.OpenTable(ok)
    too_much = api.OpenTableRequest(client_request_id="b", seat_count=4, point_value_hundredths=101)
    with pytest.raises(grpc.RpcError) as error:
        operator.OpenTable(too_much)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "maximum of 13000" in (error.value.details() or "")
    capped = api.OpenTableRequest(
        client_request_id="c",
        seat_count=4,
        point_value_hundredths=162,
        rule_set=cards_pb2.RuleSet(max_points=80),
    )
    operator.OpenTable(capped)  # 80 x 162 = 12,960: within the maximum


def test_a_table_recorded_with_options_the_rules_now_refuse_is_not_loaded_and_others_are() -> None:
    world = World()
    good = world.open_table()
    bad = pb.TableOpened(
        table_id="old-table",
        seat_count=4,
        point_value_hundredths=100,
        rule_set=cards_pb2.RuleSet(first_drop_points=150),
    )
    world.log.append(
        TABLE_EVENTS,
        Envelope.new(bad, stream_id="old-table", stream_version=1, occurred_at=datetime.now(UTC)),
    )
    app = world.new_app("table-writer-2")
    assert list(app.projection.tables) == [good]


def test_get_hand_result_and_watch_table_say_a_hand_was_voided_when_the_ledger_refused_it(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, hand_id, view, on_turn = hand_on_turn(world)
    player = stub(host, on_turn, Role.PLAYER)
    player.Drop(
        api.DropRequest(
            table_id=table_id, hand_id=hand_id, turn_no=view.turn_no, client_request_id="drop-1"
        )
    )
    ask = api.GetHandResultRequest(table_id=table_id, hand_id=hand_id)
    assert player.GetHandResult(ask).voided_reason == ""
    reason = f"hand {hand_id}: held seats [1] have no line in the settlement"
    world.feed(LEDGER_EVENTS, table_id, ledger_pb.SettlementRefused(hand_id=hand_id, reason=reason))
    answer = player.GetHandResult(ask)
    assert (answer.result.hand_id, answer.voided_reason) == (hand_id, reason)
    watched = next(iter(player.WatchTable(api.WatchTableRequest(table_id=table_id)))).view
    assert (watched.hand_id, watched.phase, watched.voided_reason) == (
        hand_id,
        api.HAND_PHASE_ENDED,
        reason,
    )


def test_get_hand_proof_waits_for_the_reveal_and_serves_only_the_hands_players_and_operators(
    served: tuple[World, ServiceHost],
) -> None:
    world, host = served
    table_id, hand_id, view, on_turn = hand_on_turn(world)
    player = stub(host, on_turn, Role.PLAYER)
    ask = api.GetHandProofRequest(table_id=table_id, hand_id=hand_id)
    with pytest.raises(grpc.RpcError) as running:
        player.GetHandProof(ask)
    assert running.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    player.Drop(
        api.DropRequest(
            table_id=table_id, hand_id=hand_id, turn_no=view.turn_no, client_request_id="drop-p"
        )
    )
    with pytest.raises(grpc.RpcError) as unrevealed:
        player.GetHandProof(ask)
    assert unrevealed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not revealed" in str(unrevealed.value.details())
    commitment = hashlib.sha256(SERVER_SEED).digest()
    world.feed(
        FAIRNESS_EVENTS,
        table_id,
        fairness_pb.SeedRevealed(
            hand_id=hand_id, server_seed=SERVER_SEED, commitment_sha256=commitment
        ),
    )
    bundle = json.loads(player.GetHandProof(ask).bundle_json)
    assert (bundle["format"], bundle["hand_id"]) == ("bb-hand-proof/1", hand_id)
    assert bundle["server_seed_hex"] == SERVER_SEED.hex()
    types = [e["event"]["type"] for e in bundle["events"]]
    assert (types[0], types[-1]) == ("table.HandStarted", "table.HandEnded")
    operator = stub(host, "ops", Role.OPERATOR).GetHandProof(ask).bundle_json
    assert json.loads(operator) == bundle
    for account, role, wanted, code in (
        ("mallory", Role.PLAYER, hand_id, grpc.StatusCode.PERMISSION_DENIED),
        ("dealer", Role.SERVICE, hand_id, grpc.StatusCode.PERMISSION_DENIED),
        (on_turn, Role.PLAYER, "no-such-hand", grpc.StatusCode.NOT_FOUND),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            stub(host, account, role).GetHandProof(
                api.GetHandProofRequest(table_id=table_id, hand_id=wanted)
            )
        assert refused.value.code() == code
