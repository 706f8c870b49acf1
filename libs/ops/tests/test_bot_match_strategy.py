"""The bots at a match table: when to drop in a pool (the drop room against the first drop),
rejoin offers and split requests, as pure functions of the table's match view."""

from __future__ import annotations

import grpc
import pytest

from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import (
    ACCEPT_REJOIN,
    DECLINE_REJOIN,
    REQUEST_SPLIT,
    BotBrain,
    MatchTemperament,
    Temperament,
    asks_split,
    drop_room,
    match_moves,
    pool_drop,
    rejoin_answer,
)
from rummy_rules.bot import Situation
from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.commands import Command, DrawFromDiscardPile, DrawFromStock
from rummy_rules.deck import Shoe
from rummy_rules.formats.messages import DealRules
from rummy_rules.gin.bot import GIN_BOT
from rummy_rules.indian import Drop
from rummy_rules.indian.bot import INDIAN_BOT
from rummy_table.contract import TableRouter
from rummy_testing.refusals import Refused

NO_WILD = None
HOPELESS = parse_cards("AC 3C 6C 9C QC 2D 5D 8D JD 4H 7H KS 10S")
TOP = parse_card("2S")
#: The Indian moves of seat 0's first turn, before drawing.
FIRST_TURN: list[Command] = [
    DrawFromStock(seat=0, turn_no=1, at_ms=0),
    DrawFromDiscardPile(seat=0, turn_no=1, at_ms=0),
    Drop(seat=0, turn_no=1, at_ms=0),
]


def first_move(brain: BotBrain, match: mpb.MatchView) -> Command | None:
    """What ``brain`` plays on seat 0's first turn of a hopeless hand at ``match``."""
    situation = Situation(seat=0, cards=HOPELESS, discard_top=TOP)
    return brain.choose(situation, FIRST_TURN, 1, match=match)


def view(
    match_format: str,
    totals: dict[int, int],
    *,
    phase: str = "in_deal",
    status: dict[int, str] | None = None,
    offers: dict[int, int] | None = None,
    asked: tuple[int, ...] = (),
) -> mpb.MatchView:
    out = mpb.MatchView(match_id="m1", match_format=match_format, phase=phase)
    for seat, total in totals.items():
        s = out.seats.add(
            seat=seat,
            account_id=f"a{seat}",
            status=(status or {}).get(seat, "in"),
            total=total,
            asked_split=seat in asked,
        )
        if offers and seat in offers:
            s.rejoin_total = offers[seat]
    return out


@pytest.mark.parametrize(
    ("match_format", "total", "drops"),
    [
        ("pool-101", 0, True),
        ("pool-101", 60, True),  # room 40: dropped to 80, still in
        ("pool-101", 80, True),  # room 20: dropped to 100, still in
        ("pool-101", 81, False),  # room 19: the drop of 20 would eliminate it
        ("pool-101", 95, False),
        ("pool-201", 175, True),  # room 25 = the 201 pool's first drop
        ("pool-201", 176, False),
    ],
)
def test_a_pool_seat_drops_a_hopeless_hand_only_when_the_first_drop_leaves_it_in(
    match_format: str, total: int, drops: bool
) -> None:
    assert (
        pool_drop(view(match_format, {0: total, 1: 10}), 0, hopeless=True, bot=INDIAN_BOT) is drops
    )


def test_a_pool_seat_never_drops_a_hand_that_is_not_hopeless() -> None:
    assert pool_drop(view("pool-101", {0: 0, 1: 0}), 0, hopeless=False, bot=INDIAN_BOT) is False


def test_a_strategy_that_names_no_price_for_giving_up_leaves_it_to_the_temperament() -> None:
    assert GIN_BOT.give_up_points(DealRules(kind="pool", target=101)) is None
    assert pool_drop(view("pool-101", {0: 0, 1: 0}), 0, hopeless=True, bot=GIN_BOT) is None


def test_outside_a_pool_the_drop_is_left_to_the_temperament() -> None:
    assert pool_drop(view("deals-2", {0: 0, 1: 0}), 0, hopeless=True, bot=INDIAN_BOT) is None
    assert pool_drop(None, 0, hopeless=True, bot=INDIAN_BOT) is None
    assert drop_room(view("best-of-3", {0: 10, 1: 0}), 0) is None


def test_the_drop_room_is_what_a_seat_can_still_take_and_stay_in() -> None:
    assert drop_room(view("pool-101", {0: 60, 1: 0}), 0) == 40
    assert drop_room(view("pool-201", {0: 0, 1: 0}), 1) == 200
    eliminated = view("pool-101", {0: 104, 1: 0}, status={0: "eliminated"})
    assert drop_room(eliminated, 0) is None


def test_the_pool_rule_overrides_the_temperament_coin_both_ways() -> None:
    near = view("pool-101", {0: 85, 1: 0})
    always = BotBrain(seed=3, temperament=Temperament(give_up=1.0))
    always.new_hand()
    assert not isinstance(first_move(always, near), Drop)
    roomy = view("pool-101", {0: 60, 1: 0})
    never = BotBrain(seed=3, temperament=Temperament(give_up=0.0))
    never.new_hand()
    assert isinstance(first_move(never, roomy), Drop)


def test_at_a_deals_table_the_temperament_coin_still_decides() -> None:
    deals = view("deals-2", {0: 0, 1: 0})
    never = BotBrain(seed=3, temperament=Temperament(give_up=0.0))
    never.new_hand()
    assert not isinstance(first_move(never, deals), Drop)
    always = BotBrain(seed=3, temperament=Temperament(give_up=1.0))
    always.new_hand()
    assert isinstance(first_move(always, deals), Drop)


def test_a_rejoin_offer_is_accepted_when_the_bot_can_pay_the_entry() -> None:
    offered = view(
        "pool-101", {0: 103, 1: 40, 2: 60}, phase="between_deals",
        status={0: "eliminated"}, offers={0: 61},
    )  # fmt: skip
    keen = MatchTemperament(rejoin=True)
    assert rejoin_answer(offered, 0, keen, 10_00) == ACCEPT_REJOIN
    assert rejoin_answer(offered, 0, keen, 10_00, available_hundredths=10_00) == ACCEPT_REJOIN
    assert rejoin_answer(offered, 0, keen, 10_00, available_hundredths=9_99) == DECLINE_REJOIN
    assert rejoin_answer(offered, 0, MatchTemperament(rejoin=False), 10_00) == DECLINE_REJOIN
    assert rejoin_answer(offered, 1, keen, 10_00) is None  # no offer to seat 1


def test_a_bot_asks_to_split_once_few_enough_seats_are_in() -> None:
    two_in = view(
        "pool-201", {0: 150, 1: 120, 2: 205}, phase="between_deals", status={2: "eliminated"}
    )
    pairs = MatchTemperament(split_at_seats=2)
    assert asks_split(two_in, 0, pairs, split_allowed=True)
    assert not asks_split(two_in, 2, pairs, split_allowed=True)  # eliminated
    assert not asks_split(two_in, 0, pairs, split_allowed=False)  # the table has no split
    assert not asks_split(two_in, 0, MatchTemperament(), split_allowed=True)  # never asks
    three_in = view("pool-201", {0: 150, 1: 120, 2: 100}, phase="between_deals")
    assert not asks_split(three_in, 0, pairs, split_allowed=True)
    asked = view("pool-201", {0: 150, 1: 120}, phase="between_deals", asked=(0,))
    assert not asks_split(asked, 0, pairs, split_allowed=True)
    assert asks_split(asked, 1, pairs, split_allowed=True)
    playing = view("pool-201", {0: 150, 1: 120}, phase="in_deal")
    assert not asks_split(playing, 0, pairs, split_allowed=True)


def test_the_match_moves_answer_the_offer_and_ask_to_split_from_the_tables_options() -> None:
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=5_00, rejoin=True, split=True)
    )
    offered = view(
        "pool-101", {0: 104, 1: 40, 2: 60, 3: 20}, phase="between_deals",
        status={0: "eliminated"}, offers={0: 61},
    )  # fmt: skip
    temperament = MatchTemperament(rejoin=True, split_at_seats=2)
    assert match_moves(offered, 0, options, temperament) == [ACCEPT_REJOIN]
    assert match_moves(offered, 0, options, temperament, available_hundredths=4_99) == [
        DECLINE_REJOIN
    ]
    assert match_moves(offered, 1, options, temperament) == []
    pair = view("pool-101", {0: 90, 1: 40}, phase="between_deals")
    assert match_moves(pair, 0, options, temperament) == [REQUEST_SPLIT]
    deals = mpb.MatchOptions(deals=mpb.DealsOptions(deals=2, entry_fee_hundredths=5_00))
    assert match_moves(view("deals-2", {0: 0, 1: 0}, phase="between_deals"), 0, deals,
                       temperament) == []  # fmt: skip


class _Plays:
    """A router recording the bot's calls (it answers every Play with an empty answer)."""

    def __init__(self, refusal: grpc.StatusCode | None = None) -> None:
        self.calls: list[tuple[str, object]] = []
        self.refusal = refusal

    def call(self, name: str, request: object, **_: object) -> object:
        self.calls.append((name, request))
        if self.refusal is not None:
            raise Refused(self.refusal, "cannot rejoin while a deal is being played")
        return api.PlayResponse()


def _rejoin_offer() -> api.PlayerView:
    table_view = api.PlayerView(table_id="t1", hand_id="h3", phase=api.HAND_PHASE_ENDED, my_seat=0)
    table_view.match.CopyFrom(
        view("pool-101", {0: 104, 1: 40, 2: 60}, phase="between_deals",
             status={0: "eliminated"}, offers={0: 61})
    )  # fmt: skip
    return table_view


def _pool_bot(router: _Plays) -> Bot:
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=5_00, rejoin=True)
    )
    b = Bot("alice", "token", TableRouter("127.0.0.1:9"), "t1", Shoe(decks=2, printed_jokers=2),
            BotBrain(seed=5), match_options=options)  # fmt: skip
    b._router = router  # type: ignore[assignment]  # the wire is replaced, not the logic
    return b


@pytest.mark.parametrize(
    ("refusal", "refused", "noted"),
    [(grpc.StatusCode.FAILED_PRECONDITION, 1, 0), (grpc.StatusCode.PERMISSION_DENIED, 0, 1)],
)
def test_a_rejoin_answer_the_next_deal_overtook_is_refused_not_an_error(
    refusal: grpc.StatusCode, refused: int, noted: int
) -> None:
    # On a loaded machine the next deal can start (closing the offer) before the answer
    # arrives: FAILED_PRECONDITION, the match moved on, as a turn's command a deadline raced.
    b = _pool_bot(_Plays(refusal))
    b.on_view(_rejoin_offer())
    assert (b.stats.refused, len(b.stats.errors), b.stats.match_commands) == (refused, noted, 0)


def test_a_bot_answers_its_rejoin_offer_once_through_play() -> None:
    router = _Plays()
    b = _pool_bot(router)
    table_view = _rejoin_offer()
    b.on_view(table_view)
    b.on_view(table_view)  # the same offer seen again: answered once
    assert [name for name, _ in router.calls] == ["Play"]
    sent = router.calls[0][1]
    assert isinstance(sent, api.PlayRequest) and sent.command.Is(mpb.AcceptRejoin.DESCRIPTOR)
    assert b.stats.match_commands == 1
