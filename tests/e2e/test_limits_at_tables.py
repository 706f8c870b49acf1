"""A player's own loss limit through the whole backend (docs/rules/responsible-play.md): the
ledger holds the seat back at the next reservation the limit would not cover, the table goes on
with those left, and everyone but that player (and operators) is told only "not dealt in".

Money in hundredths of a House Token. A points hand's reservation is 130 points x the point
value (10: 1300); a pool rejoin holds a second entry while the first is still held.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.auth import bearer_metadata
from rummy_platform.limits import open_channel
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS
from rummy_testing.events import stream_payloads as payloads
from rummy_testing.players import (
    FIRST_DROP,
    MIDDLE_DROP,
    WIN,
    Operator,
    Player,
    Table,
    play_deal,
    rejoin_after_elimination,
    rule_set,
)
from rummy_testing.stacks import RunningStack

GRANT = 5000
RULES = rule_set(turn_seconds=300, seed_window_seconds=10, start_delay_seconds=30)
NOT_DEALT_IN = ledger_pb.STAKE_REJECTION_REASON_NOT_DEALT_IN
#: Words that would tell which limit held a seat back (none may reach another seat or the table).
WHY = ("limit", "loss", "break", "exclu", "LIMIT_REASON")


@pytest.fixture
def ledger(rummy_stack: RunningStack) -> Iterator[ledger_grpc.LedgerServiceStub]:
    channel = open_channel(rummy_stack.endpoints.ledger)
    yield ledger_grpc.LedgerServiceStub(channel)
    channel.close()


def limit_day_losses(ledger: ledger_grpc.LedgerServiceStub, player: Player, amount: int) -> None:
    """``player`` sets its own daily loss limit (a first limit, or a lowering: at once)."""
    ledger.SetLossLimit(
        ledger_api.SetLossLimitRequest(
            period=ledger_api.LIMIT_PERIOD_DAY, amount_hundredths=amount
        ),
        metadata=bearer_metadata(player.token),
        timeout=10,
    )


def seated_with_a_limit(
    table: Table, ledger: ledger_grpc.LedgerServiceStub, name: str, limit: int
) -> tuple[Player, Player, Player]:
    """Players A, B, C (``<name>a`` ...), each granted ``GRANT``; C sets a daily loss limit of
    ``limit`` first; all three seated."""
    a, b, c = (table.player(f"{name}{x}", grant=GRANT) for x in "abc")
    limit_day_losses(ledger, c, limit)
    for p in (a, b, c):
        p.take_seat()
    return a, b, c


def told_others(players: list[Player], held_back: Player) -> list[str]:
    """Every text the other players' views gave about ``held_back``'s seat or a hand's abort."""
    out = []
    for p in players:
        if p is held_back:
            continue
        for view in p.views:
            out.append(view.aborted_reason)
            out += [
                s.sitting_out_reason for s in view.seats if s.account_id == held_back.account_id
            ]
    return [text for text in out if text]


def assert_private(stack: RunningStack, table_id: str, others_heard: list[str]) -> None:
    """The table's stream and what the other seats heard name no limit; the table stream's
    rejection says only "not dealt in", with nothing available."""
    for text in others_heard:
        assert not any(word in text for word in WHY), text
    table_stream = payloads(stack, TABLE_EVENTS, table_id)
    rejections = [
        p
        for p in table_stream
        if isinstance(p, ledger_pb.StakeRejected | ledger_pb.MatchMoneyRejected)
    ]
    assert rejections and all(
        (r.reason, r.available_hundredths) == (NOT_DEALT_IN, 0) for r in rejections
    ), rejections
    assert not any(isinstance(p, ledger_pb.ReservationRefusedByLimit) for p in table_stream)
    for payload in table_stream:
        assert not any(
            word in str(payload) for word in ("loss limit", "loss_limit", "LIMIT_REASON")
        )


def own_refusal(
    stack: RunningStack, player: Player, purpose: str
) -> ledger_pb.ReservationRefusedByLimit:
    """The one limit refusal on ``player``'s own key."""
    (refusal,) = [
        p
        for p in payloads(stack, LEDGER_EVENTS, player.account_id)
        if isinstance(p, ledger_pb.ReservationRefusedByLimit)
    ]
    assert (refusal.purpose, refusal.reason) == (purpose, ledger_pb.LIMIT_REASON_LOSS_LIMIT)
    return refusal


def test_a_loss_limit_reached_keeps_the_seat_out_of_the_next_hand_and_others_hear_only_not_dealt_in(
    operator: Operator, rummy_stack: RunningStack, ledger: ledger_grpc.LedgerServiceStub
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 3, 10, 1000, RULES)
    try:
        # One reservation (1300) plus 10 points: any lost hand brings C past it.
        a, b, c = seated_with_a_limit(table, ledger, "lim", 1400)
        done: set[str] = set()
        play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)  # C loses 40 x 10 = 400
        # 400 lost + 1300 > 1400: the next hand's reservation is refused, that hand aborted
        # before its deal, and the one after is dealt to A and B only.
        view = a.wait(
            lambda v: (
                bool(v.hand_id)
                and v.hand_id not in done
                and v.phase in (api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING)
                and any(s.account_id == c.account_id and not s.dealt_in for s in v.seats)
            ),
            90,
            "a hand without C",
        )
        done |= {v.hand_id for v in a.views if v.hand_id and v.hand_id != view.hand_id}
        ended = play_deal({a: WIN, b: FIRST_DROP}, done)
        assert {r.account_id for r in ended.result.results} == {a.account_id, b.account_id}
        assert c.view.HasField("my_seat")  # still seated, sitting out

        assert_private(rummy_stack, table.table_id, told_others([a, b, c], c))
        # C (and operators) are told which limit: on its own key, and its own GetLimits.
        refusal = own_refusal(rummy_stack, c, "hand")
        assert "day loss limit of 1400" in refusal.detail
        assert refusal.required_hundredths == 1300
        mine = ledger.GetLimits(
            ledger_api.GetLimitsRequest(), metadata=bearer_metadata(c.token), timeout=10
        ).limits
        day = next(p for p in mine.periods if p.period == ledger_api.LIMIT_PERIOD_DAY)
        assert (day.limit_hundredths, day.net_loss_hundredths) == (1400, 400)
    finally:
        table.close()


def test_a_pool_whose_player_hit_its_limit_at_a_rejoin_plays_on_with_those_left(
    operator: Operator, rummy_stack: RunningStack, ledger: ledger_grpc.LedgerServiceStub
) -> None:
    # Entry 1000, commission 10%, rejoin on. C's daily loss limit 1500 covers its entry (0 lost
    # + 1000) but not a rejoin's second entry while the first is held (1000 + 1000 > 1500).
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=1000, rejoin=True)
    )
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 1000, RULES, options)
    try:
        a, b, c = seated_with_a_limit(table, ledger, "lpool", 1500)
        done: set[str] = set()
        # A 20, B 40, C 120 after three deals: C is out, offered a rejoin at 41, accepts.
        view = rejoin_after_elimination(a, b, c, done)
        assert not view.match.HasField("aborted"), view.match.aborted.reason
        seat_c = next(s for s in view.match.seats if s.account_id == c.account_id)
        assert (seat_c.status, seat_c.total) == ("eliminated", 120)
        # A and B play on: deal 4 and 5, B middle-drops twice (40 + 40 -> 120): A wins.
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        over = a.wait(lambda v: v.match.HasField("ended"), 60, "the match ended")
        assert list(over.match.ended.winners) == [
            s.seat for s in over.match.seats if s.account_id == a.account_id
        ]
        # Pool 3 x 1000 (C's one entry); commission 300; A: 3000 - 300 - 1000 = +1700.
        balances = operator.settled_balances([a.account_id, b.account_id, c.account_id])
        assert balances == {a.account_id: 6700, b.account_id: 4000, c.account_id: 4000}

        assert_private(rummy_stack, table.table_id, told_others([a, b, c], c))
        refusal = own_refusal(rummy_stack, c, "rejoin")
        assert "day loss limit of 1500" in refusal.detail
    finally:
        table.close()
