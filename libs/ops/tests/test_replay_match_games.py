"""``rummy replay`` of game-stakes matches: a game to 50 of two games with gin's game-end scoring
(game bonus, shutout, boxes) and a Hollywood match (three columns), each deal a real two-seat
hand (``test_replay.SyntheticTable``: the seat on turn first-drops, so the dealer wins 20), the
ledger's MatchSettled of each game re-recorded. Replayed clean through the formats, every game's
totals after its bonuses, its settlement and the ledger's answer are re-checked: a tampered
total, bonus, column net, prize or ledger answer is caught at the event it is about, and the
journal of each game is compared to the hundredth."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import pytest
from google.protobuf.message import Message
from test_replay import SyntheticTable
from test_replay_match import MatchOnTable, match_settled, replay, tampered

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import match_payloads
from rummy_ledger.contract import match_settlement_key
from rummy_ops.replay.checks import LedgerRows
from rummy_ops.replay.checks.match import match_journal_difference, replay_match
from rummy_ops.replay.render import match_json
from rummy_rules.commands import Command
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import MatchState, deal_result
from rummy_rules.formats import messages as fm
from rummy_rules.formats.money import MatchSettlement
from rummy_rules.indian.rules import IndianShoes, bombay_baazi
from rummy_testing.match_options import GIN_SCORING, gin_game_to

SEATS = {0: "acct-ann", 1: "acct-bob"}
COMMISSION_BPS = 1000
MATCH_ID = "match-g"
GAME_TO = gin_game_to(target=50, games=2, point_value_hundredths=10, max_game_points=200)
HOLLYWOOD = mpb.MatchOptions(
    hollywood=mpb.HollywoodOptions(
        target=40, point_value_hundredths=10, max_game_points=100, scoring=GIN_SCORING
    )
)


def games_table(
    options: mpb.MatchOptions, winners: list[int]
) -> tuple[SyntheticTable, dict[int, MatchSettlement]]:
    """A two-seat table of ``options`` whose deals are won in turn by ``winners`` (each deals
    its deal and wins it on the other's first drop: 20 points), the ledger's MatchSettled of
    each game re-recorded after its GameEnded. Returns the table and each game's settlement."""
    fmt = match_payloads.format_from_pb(options, COMMISSION_BPS)
    assert fmt.deal_rules is None  # a game-stakes format plays the table's own hands
    rules = bombay_baazi(2, 0, COMMISSION_BPS, shoes=IndianShoes.RULEBOOK)  # 2 seats: 108 cards
    t = SyntheticTable(table_id="table-games", rules=rules)
    t.record(
        table_pb.TableOpened(
            table_id=t.table_id, seat_count=2, commission_bps=COMMISSION_BPS, match=options
        ),
        "",
    )
    match = MatchOnTable(t, fmt, MATCH_ID)
    settled: dict[int, MatchSettlement] = {}

    def do(make: Callable[[int], Command], hand_id: str = "") -> tuple[Event, ...]:
        events = match.do(make, hand_id)
        for game in (e for e in events if isinstance(e, fm.GameEnded)):
            settled[game.game_no] = game.settlement
            settlement = match_settled(
                MATCH_ID, game.settlement, SEATS, f"settlement:g{game.game_no}", game.game_no
            )
            t.record(settlement, MATCH_ID)
        return events

    seats = tuple(SeatAccount(s, a) for s, a in sorted(SEATS.items()))
    do(lambda at: fm.StartMatch(match_id=MATCH_ID, seats=seats, at_ms=at))
    for deal, winner in enumerate(winners, start=1):
        hand_id = f"deal-{deal}"
        do(lambda at: fm.BeginDeal(at_ms=at), hand_id)
        t.play(dict(SEATS), dealer=winner, script="drop", hand_id=hand_id)
        result = deal_result(t.settlements[hand_id])
        assert result.winners == (winner,), "the dealer wins on the other's first drop"
        do(lambda at, r=result: fm.RecordDeal(result=r, at_ms=at), hand_id)  # type: ignore[misc]
    assert match.state.is_over, "the deals given do not end the match"
    return t, settled


#: Game 1: ann, bob, ann, ann (ann 60 to 20). Game 2: bob three times (bob 60 to 0: a shutout).
GAME_TO_WINNERS = [0, 1, 0, 0, 1, 1, 1]
#: ann's 1st win: column 1; bob's 1st: column 1; ann's 2nd: columns 1 and 2 (column 1 ends at
#: 40 - 20); ann's 3rd: columns 2 and 3 (column 2 ends at 40 - 0, a shutout); bob's 2nd: column
#: 3; bob's 3rd: column 3, which ends at 40 - 20.
HOLLYWOOD_WINNERS = [0, 1, 0, 0, 1, 1]


@pytest.fixture(scope="module")
def game_to() -> tuple[SyntheticTable, dict[int, MatchSettlement]]:
    return games_table(GAME_TO, GAME_TO_WINNERS)


@pytest.fixture(scope="module")
def hollywood() -> tuple[SyntheticTable, dict[int, MatchSettlement]]:
    return games_table(HOLLYWOOD, HOLLYWOOD_WINNERS)


def _game_ended(t: SyntheticTable, game_no: int) -> mpb.GameEnded:
    found = [
        e.payload
        for e in t.envelopes
        if isinstance(e.payload, mpb.GameEnded) and e.payload.game_no == game_no
    ]
    assert len(found) == 1
    return found[0]


def test_the_hand_worked_gin_games_score_their_bonuses_and_settle_their_stakes(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, settled = game_to
    # Game 1: ann 60 + 100 + 3 boxes x 25 = 235, bob 20 + 25 = 45; bob pays min(190, 200) x
    # 0.10 = 19.00; 10% = 1.90; ann receives 17.10.
    assert [(p.seat, p.points) for p in _game_ended(t, 1).totals] == [(0, 235), (1, 45)]
    assert [(x.held_hundredths, x.amount_hundredths) for x in settled[1].lines] == [
        (2000, 1710),
        (2000, -1900),
    ]
    # Game 2: bob 60 + shutout 200 + 75 = 335 to 0: ann pays the cap, 200 x 0.10 = 20.00.
    assert [(p.seat, p.points) for p in _game_ended(t, 2).totals] == [(0, 0), (1, 335)]
    assert [(x.held_hundredths, x.amount_hundredths) for x in settled[2].lines] == [
        (2000, -2000),
        (2000, 1800),
    ]


def test_a_clean_game_to_match_replays_and_checks_each_games_ledger_answer(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, _ = game_to
    run = replay(t.envelopes)
    assert run.ok and len(run.hands) == len(GAME_TO_WINNERS)
    (match,) = run.matches
    assert match.ok and match.outcome == "ended" and match.match_format == "game-to-50"
    assert match.winners == (0, 1) and match.settlement is None  # one game each
    assert {"match-rules", "match-deal", "match-ledger-event"} <= set(match.checked)
    assert not any("MatchSettled" in note for note in match.notes)
    assert [(g.game_no, g.winner, g.totals) for g in match.games] == [
        (1, 0, ((0, 235), (1, 45))),
        (2, 1, ((0, 0), (1, 335))),
    ]
    games = match_json(match)["games"]
    assert [(g["game_no"], g["winner"]) for g in games] == [(1, 0), (2, 1)]
    assert [ln["amount_hundredths"] for ln in games[1]["settlement"]["lines"]] == [-2000, 1800]


def _total(game_no: int, seat: int, points: int) -> Callable[[Message], None]:
    def change(p: Message) -> None:
        assert isinstance(p, mpb.GameEnded)
        if p.game_no == game_no:
            p.totals[seat].points = points

    return change


@pytest.mark.parametrize(
    ("change", "nth", "says"),
    [
        # game 1 without ann's boxes (235 - 75)
        (_total(1, 0, 160), 0, "totals"),
        # game 2 with the game bonus instead of the shutout (335 - 100)
        (_total(2, 1, 235), 1, "totals"),
    ],
    ids=["boxes-left-out", "shutout-as-a-game-bonus"],
)
def test_a_tampered_game_total_is_caught_at_its_game_end(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
    change: Callable[[Message], None],
    nth: int,
    says: str,
) -> None:
    t, _ = game_to
    envelopes, version = tampered(t.envelopes, mpb.GameEnded, change, nth)
    (match,) = replay(envelopes).matches
    assert not match.ok and match.first is not None
    assert (match.first.version, match.first.check) == (version, "match-rules")
    assert says in match.first.message


def test_a_tampered_game_prize_is_caught_at_its_game_end(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, _ = game_to

    def change(p: Message) -> None:
        assert isinstance(p, mpb.GameEnded)
        p.settlement.lines[0].amount_hundredths += 100  # ann takes 1.00 of the house's
        p.settlement.commission_hundredths -= 100

    envelopes, version = tampered(t.envelopes, mpb.GameEnded, change)
    (match,) = replay(envelopes).matches
    assert match.first is not None
    assert (match.first.version, match.first.check) == (version, "match-rules")


def test_a_games_ledger_answer_moving_other_amounts_is_caught(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, _ = game_to

    def change(p: Message) -> None:
        assert isinstance(p, ledger_pb.MatchSettled)
        p.lines[0].amount_hundredths -= 1  # ann pays 20.01 in game 2

    envelopes, version = tampered(t.envelopes, ledger_pb.MatchSettled, change, nth=1)
    (match,) = replay(envelopes).matches
    assert match.first is not None
    assert (match.first.version, match.first.check) == (version, "match-ledger-event")
    assert "moved -20.01 in the ledger's MatchSettled, GameEnded (game 2) says -20.00" in (
        match.first.message
    )


def test_each_games_journal_is_fetched_by_its_key_and_compared_to_the_hundredth(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, settled = game_to

    def rows_of(game_no: int, shift: int = 0) -> LedgerRows:
        s = settled[game_no]
        nets = {x.seat: x.amount_hundredths for x in s.lines}
        nets[0] += shift
        return LedgerRows(f"settlement:g{game_no}", nets, {}, s.commission_hundredths)

    asked: list[str] = []

    def journal(shift: int) -> Callable[[str], LedgerRows | None]:
        def fetch(key: str) -> LedgerRows | None:
            asked.append(key)
            game_no = {match_settlement_key(t.table_id, MATCH_ID, n): n for n in (1, 2)}.get(key)
            return None if game_no is None else rows_of(game_no, shift if game_no == 2 else 0)

        return fetch

    later = t.envelopes[-1].occurred_at + timedelta(seconds=5)
    match = replay_match(t.table_id, MATCH_ID, t.envelopes, ledger=journal(0), now=later)
    assert match.ok and "match-ledger" in match.checked
    assert asked == [match_settlement_key(t.table_id, MATCH_ID, n) for n in (1, 2)]
    match = replay_match(t.table_id, MATCH_ID, t.envelopes, ledger=journal(-5), now=later)
    assert match.first is not None and match.first.check == "match-ledger"
    assert match.first.type == "GameEnded"
    assert match.first.message == (
        "journal settlement:g2: seat 0 moved -20.05, GameEnded (game 2) says -20.00"
    )
    assert match_journal_difference(rows_of(1), settled[1], 1) == ""
    # A game's settlement missing from the journal past the grace is a failure naming it.
    none: Callable[[str], LedgerRows | None] = lambda key: None  # noqa: E731
    much_later = later + timedelta(hours=1)
    match = replay_match(t.table_id, MATCH_ID, t.envelopes, ledger=none, now=much_later)
    assert match.first is not None and match.first.check == "match-ledger"
    assert match.first.message.startswith("game 1 ended")


def test_the_hand_worked_hollywood_match_settles_the_sum_of_its_columns_nets(
    hollywood: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, settled = hollywood
    # Column 1: ann 40 + 100 + 2 x 25 = 190, bob 20 + 25 = 45: ann +100 (145, capped).
    # Column 2: ann 40 + shutout 200 + 2 x 25 = 290, bob 0: ann +100 (capped).
    # Column 3: ann 20 + 25 = 45, bob 40 + 100 + 2 x 25 = 190: bob +100 (145, capped).
    # ann +100 in all: bob pays 10.00 of the 30.00 he holds; 10% = 1.00.
    game = _game_ended(t, 1)
    assert [(p.seat, p.points) for p in game.totals] == [(0, 100), (1, -100)]
    assert [(x.held_hundredths, x.amount_hundredths) for x in settled[1].lines] == [
        (3000, 900),
        (3000, -1000),
    ]
    stakes = [e.payload for e in t.envelopes if isinstance(e.payload, mpb.MoneyReserved)]
    assert [(p.purpose, p.game_no, p.amount_hundredths) for p in stakes] == [("stake", 1, 3000)] * 2


def test_a_clean_hollywood_match_replays_and_a_tampered_column_net_or_deal_is_caught(
    hollywood: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    t, _ = hollywood
    run = replay(t.envelopes)
    assert run.ok
    (match,) = run.matches
    assert match.ok and match.match_format == "hollywood-40" and match.winners == (0,)
    assert {"match-rules", "match-deal", "match-ledger-event"} <= set(match.checked)

    def nets(p: Message) -> None:  # column 3 left out of the sum: ann +200
        assert isinstance(p, mpb.GameEnded)
        p.totals[0].points, p.totals[1].points = 200, -200

    envelopes, version = tampered(t.envelopes, mpb.GameEnded, nets)
    (match,) = replay(envelopes).matches
    assert match.first is not None
    assert (match.first.version, match.first.check) == (version, "match-rules")

    def winner(p: Message) -> None:  # deal 2 scored for ann (bob won it): the columns move
        assert isinstance(p, mpb.DealScored)
        p.winners[0] = 0

    envelopes, version = tampered(t.envelopes, mpb.DealScored, winner, nth=1)
    (match,) = replay(envelopes).matches
    assert match.first is not None
    assert (match.first.version, match.first.check) == (version, "match-rules")


def test_a_next_match_whose_first_deal_never_got_its_stakes_is_no_hand_to_replay(
    game_to: tuple[SyntheticTable, dict[int, MatchSettlement]],
) -> None:
    # After a match ends with both seats still taken the next one starts: its first deal's
    # DealStarted names a hand that starts only once the game's stakes are held. When the
    # ledger refuses them (a loser left with less than the stake) the match is aborted and that
    # hand never starts: the replay must not report a hand without a HandStarted (it did), and
    # the aborted match replays clean.
    t, _ = game_to
    fmt = match_payloads.format_from_pb(GAME_TO, COMMISSION_BPS)
    seats = tuple(SeatAccount(s, a) for s, a in sorted(SEATS.items()))
    state: MatchState = fmt.initial_state()
    envelopes = list(t.envelopes)
    version = envelopes[-1].stream_version
    at = t.at_ms
    for command, hand_id in (
        (fm.StartMatch(match_id="match-h", seats=seats, at_ms=at + 1000), ""),
        (fm.BeginDeal(at_ms=at + 2000), "never-dealt"),
        (fm.AbortMatch(reason="the ledger refused seat 1's stake", at_ms=at + 3000), ""),
    ):
        events = fmt.decide(state, command)
        for payload in match_payloads.events_to_pb(events, state, hand_id):
            version += 1
            envelopes.append(
                replace(
                    envelopes[-1],
                    payload=payload,
                    stream_version=version,
                    correlation_id="match-h",
                    event_id=f"next-{version}",
                )
            )
        state = fmt.fold(events, state)
    assert any(
        isinstance(e.payload, mpb.DealStarted) and e.payload.hand_id == "never-dealt"
        for e in envelopes
    )
    run = replay(envelopes)
    assert "never-dealt" not in {h.hand_id for h in run.hands}
    assert run.ok and len(run.hands) == len(GAME_TO_WINNERS)
    assert [m.outcome for m in run.matches] == ["ended", "aborted"]
