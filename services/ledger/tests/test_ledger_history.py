"""A player's hands and matches (ListMyHands; ``rummy_ledger.application.history``), written by the
ledger in the transaction of each settlement: each test on ``[memory]`` and ``[postgresql]``
(``ledger_support.Wired``: the real reactor and relay; the test plays the table), and the RPC's
roles and bad requests through a real ServiceHost on PostgreSQL.

Amounts worked by hand in the comments (hundredths of a House Token).
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterator
from datetime import timedelta

import grpc
import pytest
from ledger_support import (
    ServedLedger,
    TestClock,
    Where,
    Wired,
    balance_of,
    funded_player,
    new_id,
    serving,
    status_of,
    storage,
)
from psycopg_pool import ConnectionPool

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application.history import list_played, parse_page_token
from rummy_ledger.application.ports import PlayedRow
from rummy_ledger.domain.accounts import InvalidCommand
from rummy_platform.auth import Role
from rummy_rules.registry import LEGACY_VARIANT

GRANT = 5000
PV, BPS = 10, 1000  # 0.10 a point, 10% commission


def points_table(wired: Wired, variant: str | None = "gin") -> str:
    """A points table opened with ``variant`` (None: a table the ledger never saw opened)."""
    table_id = new_id("table")
    if variant is not None:
        rule_set = cards_pb2.RuleSet(variant=variant)
        opened = table_events.TableOpened(table_id=table_id, commission_bps=BPS, rule_set=rule_set)
        wired.table(table_id, "", opened)
    return table_id


def play_hand(
    wired: Wired, table_id: str, winner: str, loser: str, points: int, *, variant: str = ""
) -> str:
    """A two-seat hand won by ``winner``: the loser pays points x 0.10, the winner gets that
    less 10% commission (rounded down). ``variant`` on the HandStarted's rule set ("": left out)."""
    hand_id = new_id("hand")
    rule_set = cards_pb2.RuleSet(variant=variant) if variant else cards_pb2.RuleSet()
    seats = [cards_pb2.Seat(seat=0, account_id=winner), cards_pb2.Seat(seat=1, account_id=loser)]
    wired.table(
        table_id,
        hand_id,
        table_events.HandStarted(
            hand_id=hand_id,
            hand_no=1,
            seats=seats,
            rule_set=rule_set,
            point_value_hundredths=PV,
            commission_bps=BPS,
            reservation_hundredths=130 * PV,
        ),
    )
    cost = points * PV
    commission = cost * BPS // 10000
    wired.table(
        table_id,
        hand_id,
        table_events.HandEnded(
            hand_id=hand_id,
            winner_seat=0,
            results=[
                table_events.SeatResult(seat=0, account_id=winner, outcome="won"),
                table_events.SeatResult(seat=1, account_id=loser, outcome="counted", points=points),
            ],
            settlement=[
                table_events.SettlementLine(
                    seat=0, account_id=winner, amount_hundredths=cost - commission
                ),
                table_events.SettlementLine(
                    seat=1, account_id=loser, points=points, amount_hundredths=-cost
                ),
            ],
            commission_hundredths=commission,
            point_value_hundredths=PV,
            commission_bps=BPS,
        ),
    )
    wired.clock.advance(timedelta(seconds=1))
    return hand_id


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def listed(where: Where, account: str, page_size: int = 0) -> list[PlayedRow]:
    """Every row of the account, page after page."""
    rows: list[PlayedRow] = []
    token = ""
    while True:
        page, token = list_played(storage(where), account, page_size=page_size, page_token_in=token)
        rows.extend(page)
        if not token:
            return rows


def summary(row: PlayedRow) -> tuple[str, str, str, str, str, int]:
    return (row.kind, row.ref_id, row.variant, row.format, row.result, row.net_hundredths)


def test_a_points_hand_lists_each_seats_result_and_what_the_ledger_settled_to_it(
    where: Where,
) -> None:
    wired = Wired(where)
    winner, loser = funded_player(where, GRANT), funded_player(where, GRANT)
    table = points_table(wired, "gin")
    hand = play_hand(wired, table, winner, loser, 40)
    wired.run()
    # 40 points x 0.10 = 4.00 from the loser; the winner gets 4.00 less 0.40 commission.
    assert balance_of(where, winner)[0] == GRANT + 360
    assert [summary(r) for r in listed(where, winner)] == [
        ("hand", hand, "gin", "single", "won", 360)
    ]
    [row] = listed(where, loser)
    assert summary(row) == ("hand", hand, "gin", "single", "counted", -400)
    assert row.table_id == table
    # The HandEnded redelivered and re-recorded: listed once, at the same net.
    wired.table(
        table,
        hand,
        wired.log.read_stream(wired.prefix + "table-events", table)[-1].envelope.payload,
    )
    wired.run()
    assert [summary(r) for r in listed(where, loser)] == [summary(row)]


def test_a_hand_at_a_table_never_seen_opened_takes_its_hands_variant_or_the_legacy_one(
    where: Where,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, GRANT), funded_player(where, GRANT)
    legacy = play_hand(wired, points_table(wired, None), a, b, 10)
    named = play_hand(wired, points_table(wired, None), a, b, 20, variant="oklahoma-gin")
    wired.run()
    assert [(r.ref_id, r.variant) for r in listed(where, a)] == [
        (named, "oklahoma-gin"),
        (legacy, LEGACY_VARIANT),
    ]


def test_pages_are_newest_first_and_stable_when_hands_end_between_them(where: Where) -> None:
    wired = Wired(where)
    a, b = funded_player(where, GRANT), funded_player(where, GRANT)
    table = points_table(wired)
    hands = [play_hand(wired, table, a, b, 10) for _ in range(5)]
    wired.run()
    first, token = list_played(storage(where), a, page_size=2)
    assert [r.ref_id for r in first] == [hands[4], hands[3]]
    later = [play_hand(wired, table, a, b, 10) for _ in range(2)]  # end while paging
    wired.run()
    second, token = list_played(storage(where), a, page_size=2, page_token_in=token)
    third, token = list_played(storage(where), a, page_size=2, page_token_in=token)
    assert [r.ref_id for r in second + third] == [hands[2], hands[1], hands[0]]
    assert token == ""
    assert [r.ref_id for r in listed(where, a, page_size=3)] == [*reversed(later), *reversed(hands)]
    assert list_played(storage(where), new_id("nobody")) == ((), "")


@pytest.mark.parametrize(
    ("size", "token"),
    [
        (101, ""),
        (0, "1"),
        (0, b64("p1:1:0")),
        (0, b64("p1:-1:1")),
        (0, b64("p1:01:1")),
        (0, "not a token"),
    ],
    ids=["size", "statement-token", "id-zero", "negative", "not-canonical", "garbage"],
)
def test_a_size_over_the_maximum_or_a_token_it_did_not_give_is_refused(
    where: Where, size: int, token: str
) -> None:
    with pytest.raises(InvalidCommand):
        list_played(storage(where), "someone", page_size=size, page_token_in=token)


def match_table(
    wired: Wired, accounts: list[str], options: match_pb2.MatchOptions, match_format: str
) -> tuple[str, str]:
    """A table of gin hosting one match of ``accounts`` (``TableOpened``, ``MatchStarted``)."""
    table_id, match_id = new_id("table"), new_id("match")
    wired.table(
        table_id,
        match_id,
        table_events.TableOpened(
            table_id=table_id,
            commission_bps=500,
            match=options,
            rule_set=cards_pb2.RuleSet(variant="gin"),
        ),
    )
    seats = [cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)]
    started = match_pb2.MatchStarted(match_id=match_id, match_format=match_format, seats=seats)
    wired.table(table_id, match_id, started)
    return table_id, match_id


GAME_TO = match_pb2.MatchOptions(
    game_to=match_pb2.GameToOptions(
        target=100, games=2, point_value_hundredths=10, max_game_points=150
    )
)


def play_game(
    wired: Wired, table: str, match: str, game_no: int, payer: int, paid: int, commission: int
) -> None:
    """A game of a two-seat game-to match: 1500 held from each seat, ``payer`` pays ``paid``,
    the other seat receives it less ``commission``."""
    wired.table(table, match, match_pb2.GameStarted(game_no=game_no, seats=[0, 1]))
    for seat in (0, 1):
        wired.table(
            table,
            match,
            match_pb2.MoneyReserved(
                seat=seat, amount_hundredths=1500, purpose="stake", game_no=game_no
            ),
        )
    lines = [
        match_pb2.MoneyLine(
            seat=seat,
            held_hundredths=1500,
            amount_hundredths=-paid if seat == payer else paid - commission,
        )
        for seat in (0, 1)
    ]
    settlement = match_pb2.MatchSettlement(
        pool_hundredths=paid,
        commission_bps=500,
        commission_hundredths=commission,
        lines=lines,
        winners=[1 - payer],
    )
    ended = match_pb2.GameEnded(game_no=game_no, winner=1 - payer, settlement=settlement)
    wired.table(table, match, ended)


def test_a_match_lists_once_at_its_end_with_every_games_stakes_and_its_entries_in_its_net(
    where: Where,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, GRANT), funded_player(where, GRANT)
    table, match = match_table(wired, [a, b], GAME_TO, "game-to-100")
    # A deal of the match: a hand at point value 0 of its table, not listed on its own.
    deal = new_id("hand")
    seats = [cards_pb2.Seat(seat=0, account_id=a), cards_pb2.Seat(seat=1, account_id=b)]
    wired.table(table, deal, table_events.HandStarted(hand_id=deal, hand_no=1, seats=seats))
    wired.table(
        table,
        deal,
        table_events.HandEnded(
            hand_id=deal,
            results=[table_events.SeatResult(seat=0, outcome="won")],
            settlement=[
                table_events.SettlementLine(seat=0, account_id=a),
                table_events.SettlementLine(seat=1, account_id=b, points=30),
            ],
        ),
    )
    # Two games, each holding 150 x 0.10 = 15.00 a seat. Game 1: b pays 5.00, a gets 4.75
    # (5% commission 0.25); game 2: a pays 3.00, b gets 2.85 (0.15). a: +475 - 300 = +175,
    # b: -500 + 285 = -215.
    for game_no, (payer, paid, commission) in enumerate([(1, 500, 25), (0, 300, 15)], start=1):
        play_game(wired, table, match, game_no, payer, paid, commission)
        wired.run()
        assert listed(where, a) == []  # running: not listed yet
    wired.table(table, match, match_pb2.MatchEnded(winners=[0], reason="most_games"))
    wired.run()
    assert (balance_of(where, a)[0], balance_of(where, b)[0]) == (GRANT + 175, GRANT - 215)
    assert [summary(r) for r in listed(where, a)] == [
        ("match", match, "gin", "game-to-100", "won", 175)
    ]
    assert [summary(r) for r in listed(where, b)] == [
        ("match", match, "gin", "game-to-100", "lost", -500 + 285)
    ]


def test_a_pool_match_lists_its_entry_settlement_and_an_aborted_match_what_its_games_moved(
    where: Where,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, GRANT), funded_player(where, GRANT)
    pool = match_pb2.MatchOptions(pool=match_pb2.PoolOptions(target=101, entry_fee_hundredths=1000))
    table, match = match_table(wired, [a, b], pool, "pool-101")
    for seat in (0, 1):
        wired.table(
            table,
            match,
            match_pb2.MoneyReserved(seat=seat, amount_hundredths=1000, purpose="entry"),
        )
    # Pool 20.00, 5% commission 1.00: b (the winner) gets 19.00, a net +9.00; a pays 10.00.
    settlement = match_pb2.MatchSettlement(
        pool_hundredths=2000,
        commission_bps=500,
        commission_hundredths=100,
        lines=[
            match_pb2.MoneyLine(seat=0, held_hundredths=1000, amount_hundredths=-1000),
            match_pb2.MoneyLine(seat=1, held_hundredths=1000, amount_hundredths=900),
        ],
        winners=[1],
    )
    wired.table(table, match, match_pb2.MatchEnded(winners=[1], settlement=settlement))
    wired.clock.advance(timedelta(seconds=1))
    # Aborted before any money moved: not listed. Aborted after its first game settled (a pays
    # 3.00): listed, at what that game moved.
    never_table, never = match_table(wired, [a, b], pool, "pool-101")
    wired.table(never_table, never, match_pb2.MatchAborted(reason="closed"))
    games_table, games = match_table(wired, [a, b], GAME_TO, "game-to-100")
    play_game(wired, games_table, games, 1, 0, 300, 15)
    wired.table(games_table, games, match_pb2.MatchAborted(reason="closed"))
    wired.run()
    assert [summary(r) for r in listed(where, a)] == [
        ("match", games, "gin", "game-to-100", "aborted", -300),
        ("match", match, "gin", "pool-101", "lost", -1000),
    ]
    assert summary(listed(where, b)[1]) == ("match", match, "gin", "pool-101", "won", 900)


def test_a_refused_settlement_is_listed_void_at_zero_and_an_aborted_hand_not_at_all(
    where: Where,
) -> None:
    wired = Wired(where)
    a, b = funded_player(where, GRANT), funded_player(where, GRANT)
    table = points_table(wired)
    seats = [cards_pb2.Seat(seat=0, account_id=a), cards_pb2.Seat(seat=1, account_id=b)]
    void, aborted = new_id("hand"), new_id("hand")
    for hand in (void, aborted):
        wired.table(
            table,
            hand,
            table_events.HandStarted(
                hand_id=hand, hand_no=1, seats=seats, reservation_hundredths=1300
            ),
        )
    wired.table(table, void, table_events.HandEnded(hand_id=void))  # no settlement: refused
    wired.clock.advance(timedelta(seconds=1))
    wired.table(table, aborted, table_events.HandAborted(hand_id=aborted, reason="dealer"))
    wired.run()
    assert [summary(r) for r in listed(where, b)] == [("hand", void, "gin", "single", "void", 0)]


# ------------------------------------------------------------------------------- the RPC


@pytest.fixture()
def served(pool: ConnectionPool) -> Iterator[ServedLedger]:
    with serving(ServedLedger(PostgresUnitOfWork(pool), TestClock())) as s:
        yield s


def test_a_player_lists_only_its_own_hands_and_an_operator_any_named_account(
    pool: ConnectionPool, served: ServedLedger
) -> None:
    wired = Wired(pool)
    a, b = funded_player(pool, GRANT), funded_player(pool, GRANT)
    table = points_table(wired)
    hands = [play_hand(wired, table, a, b, 10 + i) for i in range(3)]
    wired.run()
    own = served.stub(a).ListMyHands(pb.ListMyHandsRequest(page_size=2))
    assert [(e.hand_id, e.match_id, e.kind, e.result) for e in own.entries] == [
        (hands[2], "", "hand", "won"),
        (hands[1], "", "hand", "won"),
    ]
    assert own.entries[0].net_hundredths == 120 - 12  # 12 points x 0.10 less 10%
    assert own.entries[0].ended_at.ToDatetime() > own.entries[1].ended_at.ToDatetime()
    rest = served.stub(a).ListMyHands(
        pb.ListMyHandsRequest(account_id=a, page_token=own.next_page_token)
    )
    assert [e.hand_id for e in rest.entries] == [hands[0]]
    assert rest.next_page_token == ""
    operator = served.stub("ops", Role.OPERATOR)
    theirs = operator.ListMyHands(pb.ListMyHandsRequest(account_id=b))
    assert [(e.hand_id, e.net_hundredths) for e in theirs.entries][0] == (hands[2], -120)
    service = served.stub("table", Role.SERVICE)
    assert len(service.ListMyHands(pb.ListMyHandsRequest(account_id=b)).entries) == 3

    denied = status_of(lambda: served.stub(a).ListMyHands(pb.ListMyHandsRequest(account_id=b)))
    assert denied == grpc.StatusCode.PERMISSION_DENIED
    unnamed = status_of(lambda: operator.ListMyHands(pb.ListMyHandsRequest()))
    assert unnamed == grpc.StatusCode.INVALID_ARGUMENT
    player = served.stub(a)
    for bad in (
        pb.ListMyHandsRequest(page_size=101),
        pb.ListMyHandsRequest(page_token="12"),
        pb.ListMyHandsRequest(page_token="x" * 65),
    ):
        code = status_of(functools.partial(player.ListMyHands, bad))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert parse_page_token(own.next_page_token) is not None
