"""What ``rummy watch`` prints of the views this table streams to an operator (a spectator's
``PlayerView``, rendered by ``rummy_ops.watch_view``): for a hand of every variant (Indian points,
gin, gin Oklahoma at a Hollywood match, Rummy 500 at a match to 500), played through the table's
handlers by the moves its views list, the state shows whose turn it is and its deadline, the public
cards and counts, each seat and the variant's own lines; each change is an event line; the end
is the result's line; and no line ever shows a card held in a hand (a spectator's view holds
none, and the result's cards are not printed)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import table_calls
from match_world import hold_money, next_step, seat_all
from world import World

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import rules_pb2 as gin_rules_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.watch_view import Watched, event_lines, hand_over, state_lines

_FACE = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]\b|\bJK\w*")


@dataclass
class Step:
    """One view of the hand as a spectator sees it, with the cards the hands hold then that the
    table never showed (in the pile, as the cut or in the variant's part of a spectator's view,
    at this view or an earlier one: a card taken from the pile is known to be in a hand)."""

    view: api.PlayerView
    hidden: set[str]


def _faces(message: object) -> set[str]:
    """Every card face anywhere inside a message."""
    if isinstance(message, cards_pb2.Card):
        return {message.face}
    found: set[str] = set()
    for field, value in message.ListFields():  # type: ignore[attr-defined]
        if field.message_type is None:
            continue
        for item in [value] if hasattr(value, "ListFields") else value:
            found |= _faces(item)
    return found


def _unpacked(view: api.PlayerView) -> object:
    """The view's variant part, unpacked by the type it names (its generated class is loaded:
    the variant's bundle registered its payloads), or None."""
    if not view.variant_view.type_url:
        return None
    from google.protobuf import symbol_database

    name = view.variant_view.type_url.rsplit("/", 1)[-1]
    message = symbol_database.Default().GetSymbol(name)()
    view.variant_view.Unpack(message)
    return message


def _step(world: World, table_id: str, accounts: tuple[str, ...], public: set[str]) -> Step:
    """The step now; ``public`` (the faces shown so far) grows by what this view shows."""
    view = world.view(table_id, None)
    held = {c.face for a in accounts for c in world.view(table_id, a).my_cards}
    public |= {c.face for c in view.discard_pile}
    if view.HasField("wild_cut"):
        public.add(view.wild_cut.face)
    variant_part = _unpacked(view)
    if variant_part is not None:
        public |= _faces(variant_part)
    return Step(view, held - public)


def _move(view: api.PlayerView, commands_after_draw: bool, drop_at: int) -> api.LegalMove:
    """The move a test player makes: a drop at turn ``drop_at`` when it may, else a draw
    (the stock first), then a command (``commands_after_draw``: a knock, a meld) or a discard."""
    moves = list(view.legal_moves)
    draws = [m for m in moves if m.HasField("draw")]
    commands = [m for m in moves if m.HasField("command")]
    discards = [m for m in moves if m.HasField("discard")]
    if draws and commands and view.turn_no >= drop_at:
        return commands[0]
    if draws:
        stock = [m for m in draws if m.draw == pb.DRAW_SOURCE_STOCK]
        return (stock or draws)[0]
    if commands and (commands_after_draw or not discards):
        return commands[0]
    return discards[0]


def play(
    world: World,
    table_id: str,
    accounts: tuple[str, ...],
    commands_after_draw: bool = False,
    drop_at: int = 10_000,
) -> Iterator[Step]:
    """The hand's views, one after each move, until it is over."""
    public: set[str] = set()
    yield _step(world, table_id, accounts, public)
    for _ in range(400):
        spectator = world.view(table_id, None)
        if spectator.phase != api.HAND_PHASE_PLAYING:
            return
        account = next(s.account_id for s in spectator.seats if s.seat == spectator.turn_seat)
        view = world.view(table_id, account)
        move = _move(view, commands_after_draw, drop_at)
        if move.HasField("draw"):
            draw = world.turn_request(api.DrawCardRequest, table_id, view, source=move.draw)
            table_calls.draw(world.app, account, draw)
        elif move.HasField("discard"):
            discard = world.turn_request(api.DiscardCardRequest, table_id, view, card=move.discard)
            table_calls.discard(world.app, account, discard)
        else:
            command = world.turn_request(api.PlayRequest, table_id, view, command=move.command)
            table_calls.play(world.app, account, command)
        yield _step(world, table_id, accounts, public)
    raise AssertionError("the hand did not end in 400 moves")


@dataclass
class Watch:
    """Everything the watch printed of a hand: the state of each view and the event lines."""

    states: list[list[str]]
    events: list[str]
    ended: int

    @property
    def text(self) -> str:
        return "\n".join([*(x for s in self.states for x in s), *self.events])


def watch(world: World, table_id: str, steps: Iterator[Step]) -> Watch:
    """Render every step as ``rummy watch`` does, checking each step's lines against the cards
    hidden then."""
    (summary,) = [
        t for t in table_calls.list_tables(world.app, include_closed=True) if t.table_id == table_id
    ]
    table = Watched(summary)
    out = Watch([], [], 0)
    before: api.PlayerView | None = None
    for step in steps:
        state = state_lines(table, step.view)
        events = event_lines(table, before, step.view) if before is not None else []
        shown = set(_FACE.findall("\n".join(state + events)))
        assert not shown & step.hidden, (shown & step.hidden, state, events)
        out.states.append(state)
        out.events += events
        out.ended += hand_over(before, step.view)
        before = step.view
    return out


def _dealt(world: World, table_id: str, accounts: tuple[str, ...]) -> None:
    for account in accounts:
        world.sit(table_id, account)
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)


def test_an_indian_points_hand_shows_turns_draws_discards_a_drop_and_the_result() -> None:
    world = World()
    accounts = ("alice", "bob")
    table_id = world.open_table(2, 10, 500)
    _dealt(world, table_id, accounts)
    seen = watch(world, table_id, play(world, table_id, accounts, drop_at=5))
    first = seen.states[0]
    assert first[0].startswith("table ") and "indian-points  single  point 0.10  open" in first[0]
    assert re.fullmatch(r"turn 1: s\d (alice|bob) to draw, until \d\d:\d\d:\d\d UTC", first[2])
    assert re.fullmatch(r"cut \S+  pile 1 top \S+  stock \d+", first[3])
    assert sum(line.endswith("13 cards  playing") for line in first) == 2
    assert any(re.fullmatch(r"s\d drew from the stock", e) for e in seen.events)
    assert any(re.fullmatch(r"s\d discarded \S+", e) for e in seen.events)
    assert any(re.fullmatch(r"turn 5: s\d \w+ to draw, until .*", e) for e in seen.events)
    assert any(re.fullmatch(r"s\d \w+: dropped", e) for e in seen.events)
    results = [e for e in seen.events if e.startswith("hand 1 ")]
    assert len(results) == 1 and "winner s" in results[0] and "net [" in results[0]
    assert seen.ended == 1


def test_a_gin_hand_shows_the_knock_limit_the_knock_and_the_score() -> None:
    world = World()
    accounts = ("ann", "bob")
    table_id = world.open_table(2, 10, 0, cards_pb2.RuleSet(variant="gin"))
    _dealt(world, table_id, accounts)
    seen = watch(world, table_id, play(world, table_id, accounts, commands_after_draw=True))
    assert {"knock limit 10", "the upcard is on offer"} <= set(seen.states[0])
    assert "knock limit 10" not in seen.events  # only what changed is an event
    assert any(re.match(r"s\d took \S+ from the pile", e) for e in seen.events)
    knock = [e for e in seen.events if " knocked (" in e]
    ends = [e for e in seen.events if e.startswith(("scored: ", "the wall: "))]
    assert knock or ends, seen.text
    assert len(ends) == 1 and seen.ended == 1
    assert any(e.startswith("hand 1 ") and "winner s" in e for e in seen.events)


@pytest.mark.parametrize("variant", ["gin-oklahoma-hollywood", "rummy500-race-to-500"])
def test_a_match_hand_shows_the_variant_s_lines_and_the_match(variant: str) -> None:
    world = World()
    if variant.startswith("gin"):
        accounts: tuple[str, ...] = ("ann", "bob")
        rules = cards_pb2.RuleSet(variant="gin", start_delay_seconds=0)
        rules.other_variant.Pack(gin_rules_pb.GinOptions(oklahoma=True))
        match = mpb.MatchOptions(
            hollywood=mpb.HollywoodOptions(
                target=100, point_value_hundredths=1, max_game_points=300
            )
        )
        purpose = "stake"
    else:
        accounts = ("ann", "bob", "cy")
        rules = cards_pb2.RuleSet(variant="rummy500", start_delay_seconds=0)
        match = mpb.MatchOptions(
            race_to=mpb.RaceToOptions(target=500, point_value_hundredths=1, max_game_points=500)
        )
        purpose = "stake"
    request = api.OpenTableRequest(
        client_request_id=world.request_id(),
        seat_count=len(accounts),
        commission_bps=500,
        rule_set=rules,
        match=match,
    )
    table_id = table_calls.open_table(world.app, "op", request)
    seat_all(world, table_id, accounts)
    next_step(world, table_id)
    hold_money(world, table_id, purpose, 1)
    next_step(world, table_id)
    world.prepare(table_id, world.view(table_id, None).hand_id)
    seen = watch(world, table_id, play(world, table_id, accounts, commands_after_draw=True))
    first = seen.states[0]
    assert any(line.startswith("match ") and "not over" in line for line in first), first
    if variant.startswith("gin"):
        assert "hollywood-100" in first[0], first[0]
        assert any(line.startswith("knock limit ") for line in first)
        assert any(line.startswith("sheet 1 (running)") for line in first)
    else:
        assert "race-to-500" in first[0] or "race_to" in first[0] or "500" in first[0]
        assert "table points [s0:0 s1:0 s2:0]" in first
        assert any(e.startswith("round over (") for e in seen.events), seen.text
    assert seen.ended == 1
