"""Two table-service instances sharing the tables by partition (in-memory log, real gRPC):
each serves only its partitions' tables, a call for another's table is UNAVAILABLE naming the
owner (``rummy-table-owner``), the client router follows it, ListTables answers for every table
on either instance (closed ones when asked), and a request id's answer survives a takeover of
its partition (``docs/rules/promises.md#scales-out``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack

import grpc
import pytest
from click.testing import CliRunner
from served_table import served_table, stub
from world import World, replay_all

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.cli import main as rummy
from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.server import ServiceHost
from rummy_platform.topics import TABLE_EVENTS
from rummy_table.adapters.peers import PeerTables
from rummy_table.application.ownership import Ownership, PartitionOwner
from rummy_table.contract import TableRouter, owner_named_by
from rummy_testing.token_keys import issuer_authority

AUTHORITY = issuer_authority()


class Instances:
    """Instance ``a`` owns partition 0, ``b`` partition 1 (of 2), both in each one's directory."""

    def __init__(self, resources: ExitStack) -> None:
        log = InMemoryEventLog()
        self.worlds = [World(log=log), World(log=log)]
        for world, name in zip(self.worlds, "ab", strict=True):  # each its own writer
            world.app = world.new_app(f"table-writer-{name}")
        self.hosts: list[ServiceHost] = [
            resources.enter_context(served_table(w))[1] for w in self.worlds
        ]
        self.owners = []
        for partition, (world, host) in enumerate(zip(self.worlds, self.hosts, strict=True)):
            ownership = Ownership(2, host.address, f"writer-{partition}")
            ownership.grant(frozenset({partition}), None, {})
            world.app.ownership = ownership
            world.app.peer_tables = PeerTables(
                ownership, lambda: AUTHORITY.issue("table", Role.SERVICE)
            )
            self.owners.append(ownership)
        for partition, host in enumerate(self.hosts):
            self.announce(partition, host.address, generation=1)

    def announce(self, partition: int, address: str, generation: int) -> None:
        for ownership in self.owners:
            ownership.learn(PartitionOwner(partition, address, generation, f"w-{address}"))

    @property
    def addresses(self) -> list[str]:
        return [h.address for h in self.hosts]


@pytest.fixture
def instances() -> Iterator[Instances]:
    with ExitStack() as resources:
        yield Instances(resources)


def _operator() -> tuple[tuple[str, str]]:
    return bearer_metadata(AUTHORITY.issue("op", Role.OPERATOR))


def _open_one_per_partition(
    router: TableRouter, owners: list[Ownership], opened: list[str] | None = None
) -> dict[int, str]:
    """Open tables through ``router`` until each partition holds one (their ids added to
    ``opened``); partition -> the first table id of it."""
    tables: dict[int, str] = {}
    for n in range(40):
        table_id = router.call(
            "OpenTable",
            api.OpenTableRequest(client_request_id=f"open-{n}", seat_count=4),
            metadata=_operator(),
        ).table_id
        tables.setdefault(owners[0].partition_of(table_id), table_id)
        if opened is not None:
            opened.append(table_id)
        if len(tables) == 2:
            return tables
    raise AssertionError("40 table ids all fell in one partition")


def test_a_call_for_a_table_of_another_instance_is_unavailable_naming_its_owner_and_appends_nothing(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    tables = _open_one_per_partition(router, instances.owners)
    assert router.redirects >= 1  # the first instance sent the other partition's open on
    log = instances.worlds[0].log
    before = len(replay_all(log))

    with pytest.raises(grpc.RpcError) as refused:
        stub(instances.hosts[0], "alice", Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=tables[1], client_request_id="sit-1")
        )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    owner = instances.addresses[1]
    assert owner in (refused.value.details() or "")
    # the owner in the trailing metadata (OWNER_METADATA_KEY), as the router reads it
    assert owner_named_by(refused.value) == owner
    assert len(replay_all(log)) == before
    # Reads are refused the same way: the instance holds none of the other's tables.
    with pytest.raises(grpc.RpcError) as watch:
        next(
            iter(
                stub(instances.hosts[0], "alice", Role.PLAYER).WatchTable(
                    api.WatchTableRequest(table_id=tables[1])
                )
            )
        )
    assert watch.value.code() == grpc.StatusCode.UNAVAILABLE
    assert tables[1] not in instances.worlds[0].app.projection.tables
    router.close()


def test_list_tables_answers_for_every_table_whichever_instance_is_asked(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    opened: list[str] = []
    _open_one_per_partition(router, instances.owners, opened)
    for host in instances.hosts:
        listed = stub(host, "alice", Role.PLAYER).ListTables(api.ListTablesRequest())
        assert [t.table_id for t in listed.tables] == sorted(opened)
        # Page by page (one table a page) the same tables come, in order, once each.
        paged, token = [], ""
        while True:
            page = stub(host, "alice", Role.PLAYER).ListTables(
                api.ListTablesRequest(page_size=1, page_token=token)
            )
            paged += [t.table_id for t in page.tables]
            token = page.next_page_token
            if not token:
                break
        assert paged == sorted(opened)
    router.close()


def test_list_tables_lists_a_closed_table_of_another_instance_only_when_asked(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    opened: list[str] = []
    tables = _open_one_per_partition(router, instances.owners, opened)
    close = api.CloseTableRequest(table_id=tables[1], client_request_id="close-1")
    assert router.call("CloseTable", close, metadata=_operator()).state == api.TABLE_STATE_CLOSED
    reader = stub(instances.hosts[0], "alice", Role.PLAYER)
    lobby = reader.ListTables(api.ListTablesRequest()).tables
    assert [t.table_id for t in lobby] == sorted(set(opened) - {tables[1]})
    everything = reader.ListTables(api.ListTablesRequest(include_closed=True)).tables
    assert [t.table_id for t in everything] == sorted(opened)
    states = {t.table_id: t.state for t in everything}
    assert states[tables[1]] == api.TABLE_STATE_CLOSED
    assert states[tables[0]] == api.TABLE_STATE_OPEN
    router.close()


def test_the_router_follows_the_owner_and_a_request_id_answer_survives_a_takeover(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    tables = _open_one_per_partition(router, instances.owners)
    alice = bearer_metadata(AUTHORITY.issue("alice", Role.PLAYER))
    sit = api.TakeSeatRequest(table_id=tables[1], client_request_id="sit-alice", seat=2)
    assert router.call("TakeSeat", sit, metadata=alice).seat == 2
    assert router.address_for(tables[1]) == instances.addresses[1]

    # Instance b hands partition 1 over to a, which rebuilds it from the log.
    a, b = instances.worlds
    instances.owners[1].revoke(frozenset({1}))
    b.app.drop_partitions(frozenset({1}))
    a.app.replay(
        e
        for e in replay_all(a.log, TABLE_EVENTS)
        if instances.owners[0].partition_of(e.stream_id) == 1
    )
    instances.owners[0].grant(frozenset({1}), None, {})
    instances.announce(1, instances.addresses[0], generation=2)

    # The retried request is answered from the rebuilt events (no second seat), through a.
    assert router.call("TakeSeat", sit, metadata=alice).seat == 2
    assert router.address_for(tables[1]) == instances.addresses[0]
    view = a.app.projection.tables[tables[1]]
    assert [s.account_id for s in view.seats.values()] == ["alice"]
    router.close()


def test_rummy_close_table_sent_to_the_wrong_instance_follows_the_redirect_to_the_owner(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    tables = _open_one_per_partition(router, instances.owners)
    router.close()
    token = AUTHORITY.issue("op-closer", Role.OPERATOR)
    args = ["close-table", tables[1], "--address", instances.addresses[0], "--token", token]
    result = CliRunner().invoke(rummy, [*args, "--reason", "routing test", "--no-wait"])
    assert result.exit_code == 0, result.output
    assert f"table {tables[1]}" in result.output
    owner_tables = instances.worlds[1].app.projection.tables
    assert owner_tables[tables[1]].closing or owner_tables[tables[1]].closed


def test_rummy_tables_lists_every_instances_tables_and_a_name_is_resolved_on_any_instance(
    instances: Instances,
) -> None:
    router = TableRouter(instances.addresses[0])
    tables: dict[int, str] = {}
    for n in range(40):  # until each partition holds a table named after it
        request = api.OpenTableRequest(
            client_request_id=f"named-{n}", seat_count=4, point_value_hundredths=25, name=f"t{n}"
        )
        table_id = router.call("OpenTable", request, metadata=_operator()).table_id
        if tables.setdefault(instances.owners[0].partition_of(table_id), table_id) != table_id:
            continue
        if len(tables) == 2:
            break
    router.close()
    token = AUTHORITY.issue("op-lister", Role.OPERATOR)
    cli = ["--address", instances.addresses[0], "--token", token]
    listed = CliRunner().invoke(rummy, ["tables", "--json", *cli])
    assert listed.exit_code == 0, listed.output
    by_id = {t["table_id"]: t for t in json.loads(listed.output)}
    assert set(tables.values()) <= set(by_id)
    far = by_id[tables[1]]  # served by instance b, listed through a
    name = str(far["name"])
    assert (far["point_value_hundredths"], far["state"], far["seat_count"]) == (25, "open", 4)

    closed = CliRunner().invoke(rummy, ["close-table", name, *cli, "--no-wait"])
    assert closed.exit_code == 0, closed.output
    assert f"table {tables[1]} closed" in closed.output
    line = CliRunner().invoke(rummy, ["tables", name, *cli])
    assert line.exit_code == 0, line.output
    header, row = line.output.splitlines()
    assert header.split()[0] == "ID" and row.split()[:2] == [tables[1], name]
    assert row.split()[-2:] == ["closed", "0"]
    missing = CliRunner().invoke(rummy, ["close-table", "no-such-name", *cli, "--no-wait"])
    assert missing.exit_code == 1
    assert "Error: no table named 'no-such-name'" in missing.output
    again = api.OpenTableRequest(client_request_id="same-name", seat_count=4, name=name)
    other = TableRouter(instances.addresses[1])
    twin = other.call("OpenTable", again, metadata=_operator()).table_id
    other.close()
    refused = CliRunner().invoke(rummy, ["close-table", name, *cli, "--no-wait"])
    assert refused.exit_code == 1
    assert f"2 tables are named {name!r}" in refused.output
    assert f"{tables[1]} (closed)" in refused.output and f"{twin} (open)" in refused.output
    both = CliRunner().invoke(rummy, ["tables", name, *cli])
    assert len(both.output.splitlines()) == 3
