"""Write the kept records of this folder (README.md): run once, by hand, on the commit the README
names; the tests never run it (they read what it wrote, as records kept from before a change).

    .venv/bin/python tests/data/kept/generate.py

Plays, in process (the table service's test World: the real TableApp over the in-memory event
log), an Indian points hand and a deals match of Indian rummy to their ends, and a gin hand
through the rules library (``tests/e2e/gin_bundles.py``), then writes each hand's proof bundle,
the table stream as ``rummy export`` writes it, a table snapshot taken mid-hand, and the rules
codec's JSON of the match-format events and of the final hand states.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "services/table/tests"), str(ROOT / "tests/e2e")]

from gin_bundles import gin_hand  # noqa: E402
from match_world import hold_money, next_step, open_match_table, play_deal, seat_all  # noqa: E402
from test_table_service import draw, on_turn, settled_for  # noqa: E402
from world import SERVER_SEED, World, replay_all  # noqa: E402

from rummy.fairness.v1 import events_pb2 as fairness_pb  # noqa: E402
from rummy.ledger.v1 import events_pb2 as ledger_pb  # noqa: E402
from rummy.match.v1 import match_pb2 as mpb  # noqa: E402
from rummy.table.v1 import events_pb2 as pb  # noqa: E402
from rummy_game import match_payloads, stream_payloads  # noqa: E402
from rummy_ops.replay.jsonl import to_json  # noqa: E402
from rummy_platform.eventlog import partition_for  # noqa: E402
from rummy_platform.topics import FAIRNESS_EVENTS, LEDGER_EVENTS, TABLE_EVENTS  # noqa: E402
from rummy_rules import json_form  # noqa: E402
from rummy_table.adapters import snapshot  # noqa: E402

PARTITIONS = 2  # the World's topics


def settle(world: World, table_id: str, ended: pb.HandEnded) -> None:
    """The fairness service's reveal and the ledger's settlement of an ended hand."""
    world.feed(
        FAIRNESS_EVENTS,
        table_id,
        fairness_pb.SeedRevealed(hand_id=ended.hand_id, server_seed=SERVER_SEED),
    )
    if not world.app.projection.tables[table_id].match:
        world.feed(LEDGER_EVENTS, table_id, settled_for(ended))


def write(name: str, text: str) -> None:
    (HERE / name).write_text(text + "\n", encoding="utf-8")


def dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def export(world: World, table_id: str, name: str) -> None:
    lines = [dump(to_json(e)) for e in replay_all(world.log) if e.stream_id == table_id]
    write(name, "\n".join(lines))


def take_snapshot(world: World, table_id: str) -> bytes:
    p = partition_for(table_id, PARTITIONS)
    taken = snapshot.take(
        world.app.projection, TABLE_EVENTS, p, lambda t: partition_for(t, PARTITIONS)
    )
    assert taken is not None
    return taken.data


def points(world: World) -> None:
    table_id = world.open_table(seats=3, point_value=25, commission_bps=500)
    for account in ("ann", "bob", "cat"):
        world.sit(table_id, account)
    world.start_hand(table_id)
    ended = play_deal(world, table_id, {0: "win", 1: "middle", 2: "first"})
    settle(world, table_id, ended)
    write("indian-points.bundle.json", world.app.get_hand_proof(None, table_id, ended.hand_id))
    # a second hand, stopped after a few turns: the snapshot holds a hand in play
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    account, view = on_turn(world, table_id)
    draw(world, table_id, account, view)
    data = take_snapshot(world, table_id)
    write("table.snapshot.json", data.decode())
    export(world, table_id, "indian-points.export.jsonl")


def deals(world: World) -> None:
    options = mpb.MatchOptions(deals=mpb.DealsOptions(deals=2, entry_fee_hundredths=1000))
    table_id = open_match_table(world, options, seats=2, commission_bps=1500)
    seat_all(world, table_id, ("dan", "eve"))
    next_step(world, table_id)
    hold_money(world, table_id)
    next_step(world, table_id)
    first = play_deal(world, table_id, {0: "win", 1: "first"})
    settle(world, table_id, first)
    next_step(world, table_id)
    second = play_deal(world, table_id, {0: "win", 1: "middle"})
    settle(world, table_id, second)
    next_step(world, table_id)
    write("indian-deals.bundle.json", world.app.get_hand_proof(None, table_id, second.hand_id))
    export(world, table_id, "indian-deals.export.jsonl")
    # the match's events as the rules library's format messages (rummy_rules.json_form JSON)
    messages = []
    for e in replay_all(world.log):
        if e.stream_id == table_id and match_payloads.is_match_payload(e.payload):
            at_ms = stream_payloads.datetime_to_ms(e.occurred_at)
            messages.append(json_form.to_dict(match_payloads.event_from_pb(e.payload, at_ms)))
    write("deals-match.events.json", json.dumps(messages, sort_keys=True, indent=1))
    write("deals.snapshot.json", take_snapshot(world, table_id).decode())


def gin() -> None:
    bundle, state = gin_hand("kept", point_value_hundredths=10, commission_bps=500)
    from rummy_game.proof import canonical_json

    write("gin.bundle.json", canonical_json(bundle))
    write("gin.state.json", dump(json_form.to_dict(state)))


def main() -> None:
    points(World())
    deals(World())
    gin()
    _ = ledger_pb  # the ledger's answers are fed by settle()


if __name__ == "__main__":
    main()
