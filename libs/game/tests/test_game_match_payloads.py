"""The match wire (rummy.match.v1): options <-> formats, every match event through an envelope
and back to the same rules event, the stake's game number from the state, commands, the view."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy.match.v1 import match_pb2 as mpb
from rummy_game import match_payloads as mw
from rummy_game.variant_wire import StreamPayloadError
from rummy_platform.envelope import Envelope, decode, encode, event_payloads
from rummy_rules.commands import Command
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import (
    DealResult,
    GameScoring,
    GameTo,
    MatchFormat,
    MatchState,
    make_format,
    match_view,
)
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSetError
from rummy_testing.match_options import GIN_SCORING, gin_game_to

T0 = 1_700_000_000_123
REGISTRY = event_payloads()


def _through_envelope(payload: Message, at_ms: int) -> Event:
    """``payload`` appended and read back (bytes, the registry), decoded at its occurred-at."""
    envelope = Envelope.new(
        payload,
        stream_id="t-1",
        stream_version=1,
        occurred_at=datetime.fromtimestamp(at_ms / 1000, tz=UTC),
    )
    back = decode(encode(envelope), REGISTRY)
    ms = int(back.occurred_at.timestamp() * 1000 + 0.5)
    return mw.event_from_pb(back.payload, ms)


FORMATS = [
    make_format("pool", target=101, entry_hundredths=500, commission_bps=1000, rejoin=True),
    make_format("pool", target=201, entry_hundredths=250, commission_bps=500, split=True),
    make_format("deals", deals=2, entry_hundredths=1000, commission_bps=1500),
    make_format("best-of", deals=3, entry_hundredths=100, commission_bps=0),
    make_format(
        "game-to",
        target=50,
        games=2,
        point_value_hundredths=10,
        max_game_points=60,
        commission_bps=800,
        missed_turns_lose_game=True,
    ),
    make_format(
        "game-to",
        target=100,
        games=2,
        point_value_hundredths=5,
        max_game_points=500,
        commission_bps=250,
        missed_turns_lose_game=True,
        scoring=GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25),
    ),
    make_format(
        "hollywood",
        target=100,
        point_value_hundredths=10,
        max_game_points=400,
        commission_bps=500,
        missed_turns_lose_game=True,
        scoring=GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25),
    ),
]


@dataclass
class Played:
    """A match of ``fmt`` played command by command: every event with the state before it in
    :attr:`events`; a command the rules refuse changes nothing."""

    fmt: MatchFormat
    state: MatchState = field(init=False)
    events: list[tuple[Event, MatchState]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = self.fmt.initial_state()

    def do(self, command: object) -> None:
        try:
            events = self.fmt.decide(self.state, command)  # type: ignore[arg-type]
        except RuleViolation:
            return
        for event in events:
            self.events.append((event, self.state))
            self.state = self.fmt.apply(self.state, event)


def _play(fmt: MatchFormat, data: st.DataObject) -> tuple[list[tuple[Event, MatchState]], str]:
    """A match of ``fmt`` played with drawn deal results, rejoins, splits, leaves and voided
    deals: every event with the state before it."""
    seats = data.draw(st.integers(fmt.min_seats, min(fmt.max_seats, 4)), label="seats")
    moves = ["score", "score", "score", "void", "leave", "abort"]
    if getattr(fmt, "takes_drawn_deals", False):
        moves.append("drawn")  # gin's wall: no winner, nobody charged
    played = Played(fmt)
    do = played.do
    do(
        fm.StartMatch(
            match_id="m-1",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in range(seats)),
            at_ms=T0,
        )
    )
    for step in range(40):
        if played.state.is_over:
            break
        at = T0 + step * 1000
        if played.state.deal_seats:
            move = data.draw(st.sampled_from(moves))
            if move == "abort" and data.draw(st.integers(0, 3)) == 0:
                do(fm.AbortMatch(reason="closed by an operator", at_ms=at))
                continue
            if move == "void":
                do(fm.RecordDealAborted(reason="dealer gone", at_ms=at))
                continue
            if move == "drawn":
                nobody = tuple((s, 0) for s in played.state.deal_seats)
                do(fm.RecordDeal(result=DealResult(points=nobody, winners=()), at_ms=at))
                continue
            if move == "leave":
                seat = data.draw(st.sampled_from(played.state.deal_seats))
                do(fm.LeaveMatch(seat=seat, at_ms=at))
            dealt = played.state.deal_seats
            winner = data.draw(st.sampled_from(dealt))
            points = {s: 0 if s == winner else data.draw(st.integers(2, 80)) for s in dealt}
            out = played.state.out
            left = frozenset(s for s, reason in out if s in dealt and reason.value == "left")
            result = DealResult(points=tuple(sorted(points.items())), winners=(winner,), left=left)
            do(fm.RecordDeal(result=result, at_ms=at))
        else:
            for seat, _ in played.state.rejoin_offers:
                cls = data.draw(st.sampled_from([fm.AcceptRejoin, fm.DeclineRejoin]))
                do(cls(seat=seat, at_ms=at))
            if data.draw(st.booleans()):
                for seat in played.state.active:
                    do(fm.RequestSplit(seat=seat, at_ms=at))
            do(fm.BeginDeal(at_ms=at))
    return played.events, played.state.match_id


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data())
def test_every_match_event_reads_back_as_itself_through_an_envelope(
    fmt: MatchFormat, data: st.DataObject
) -> None:
    played, _ = _play(fmt, data)
    assert played
    for event, before in played:
        payload = mw.event_to_pb(event, before, hand_id="h-7")
        assert mw.is_match_payload(payload)
        at = getattr(event, "at_ms", T0)
        assert _through_envelope(payload, at) == event
        if isinstance(event, fm.MoneyReserved):
            assert payload.game_no == (before.game_no if event.purpose == "game" else 0)  # type: ignore[attr-defined]


@settings(max_examples=20, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data())
def test_a_match_folded_from_its_payloads_is_the_match_played(
    fmt: MatchFormat, data: st.DataObject
) -> None:
    played, _ = _play(fmt, data)
    events = [e for e, _ in played]
    payloads = mw.events_to_pb(events, fmt.initial_state(), hand_id="h-1")
    state = fmt.initial_state()
    live = fmt.fold(events)
    for payload, event in zip(payloads, events, strict=True):
        state = fmt.apply(state, mw.event_from_pb(payload, getattr(event, "at_ms", 0)))
    assert state == live
    assert mw.view_to_pb(match_view(fmt, state)) == mw.view_to_pb(match_view(fmt, live))


ONE_OF_EACH: list[Event] = [
    fm.TieBreakDue(seats=(0, 2)),
    fm.SeatForfeitedGame(seat=1),
    fm.RejoinDeclined(seat=3),
    fm.RejoinOffered(seat=3, total=77, entry_hundredths=500),
    fm.Rejoined(seat=3, total=77),
    fm.SeatEliminated(seat=2, total=101),
    fm.SeatLeft(seat=2, mid_deal=True),
    fm.SplitRequested(seat=0),
    fm.GameStarted(game_no=2, seats=(0, 1)),
    fm.MatchAborted(reason="closed", released=((0, 500), (1, 500)), at_ms=T0),
    fm.MatchEnded(winners=(0, 1), reason="split", settlement=None, at_ms=T0),
    fm.MoneyReserved(seat=1, amount_hundredths=500, purpose="rejoin"),
]


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_each_rarer_match_event_reads_back_as_itself(event: Event) -> None:
    assert _through_envelope(mw.event_to_pb(event, MatchState(), "h"), T0) == event


def test_a_games_stakes_carry_the_game_they_are_for() -> None:
    fmt = FORMATS[4]  # game to 50, 60 x 0.10 a game
    state = fmt.fold(
        fmt.decide(
            fmt.initial_state(),
            fm.StartMatch(match_id="m", seats=(SeatAccount(0, "a"), SeatAccount(1, "b")), at_ms=T0),
        )
    )
    events = fmt.decide(state, fm.BeginDeal(at_ms=T0))
    payloads = mw.events_to_pb(events, state, hand_id="h-1")
    stakes = [p for p in payloads if isinstance(p, mpb.MoneyReserved)]
    assert [(p.purpose, p.game_no, p.amount_hundredths) for p in stakes] == [
        ("stake", 1, 600),
        ("stake", 1, 600),
    ]
    (dealt,) = [p for p in payloads if isinstance(p, mpb.DealStarted)]
    assert dealt.hand_id == "h-1"


@settings(max_examples=60, deadline=None)
@given(
    arm=st.sampled_from(["pool", "deals", "best_of", "game_to", "hollywood"]),
    entry=st.integers(0, 10**9),
    commission=st.integers(0, 10_000),
    flags=st.tuples(st.booleans(), st.booleans()),
    number=st.integers(0, 3),
    bonuses=st.none() | st.tuples(*[st.integers(0, 100_000)] * 3).filter(any),
)
def test_format_options_read_back_as_the_options_given(
    arm: str,
    entry: int,
    commission: int,
    flags: tuple[bool, bool],
    number: int,
    bonuses: tuple[int, int, int] | None,
) -> None:
    scoring = None
    if bonuses is not None:
        game, shutout, box = bonuses
        scoring = mpb.GameScoring(
            game_bonus_points=game, shutout_bonus_points=shutout, box_points=box
        )
    if arm == "pool":
        options = mpb.MatchOptions(
            pool=mpb.PoolOptions(
                target=(101, 201)[number % 2],
                entry_fee_hundredths=entry,
                rejoin=flags[0],
                split=flags[1],
            )
        )
    elif arm == "deals":
        options = mpb.MatchOptions(
            deals=mpb.DealsOptions(deals=(2, 3, 6)[number % 3], entry_fee_hundredths=entry)
        )
    elif arm == "best_of":
        options = mpb.MatchOptions(
            best_of=mpb.BestOfOptions(deals=2 + number, entry_fee_hundredths=entry)
        )
    elif arm == "game_to":
        options = mpb.MatchOptions(
            game_to=mpb.GameToOptions(
                target=100 + number,
                games=1 + number,
                point_value_hundredths=entry % 1000,
                max_game_points=50 + number,
                missed_turns_lose_game=flags[0],
                scoring=scoring,
            )
        )
    else:
        options = mpb.MatchOptions(
            hollywood=mpb.HollywoodOptions(
                target=(100, 150, 250)[number % 3],
                point_value_hundredths=entry % 1000,
                max_game_points=100 + number,
                missed_turns_lose_game=flags[0],
                scoring=scoring,
            )
        )
    fmt = mw.format_from_pb(options, commission)
    assert mw.format_to_pb(fmt) == options
    assert mw.commission_of(fmt) == commission
    assert mw.format_from_pb(mw.format_to_pb(fmt), commission) == fmt
    assert mw.is_match(options)


def test_no_options_or_single_is_a_points_table() -> None:
    assert mw.format_from_pb(None, 500).name == "single"
    assert mw.format_from_pb(mpb.MatchOptions(), 500).name == "single"
    assert not mw.is_match(mpb.MatchOptions(single=mpb.SingleOptions()))
    assert not mw.is_match(None)


@pytest.mark.parametrize(
    ("options", "commission", "message"),
    [
        (
            mpb.MatchOptions(pool=mpb.PoolOptions(target=150)),
            0,
            "match.pool.target must be 101 or 201, got 150",
        ),
        (
            mpb.MatchOptions(deals=mpb.DealsOptions(deals=4)),
            0,
            "match.deals.deals must be 2, 3 or 6, got 4",
        ),
        (mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=11)), 0, "match.best_of.deals must be"),
        (
            mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=-1)),
            0,
            "match.pool.entry_fee_hundredths must be",
        ),
        (
            mpb.MatchOptions(game_to=mpb.GameToOptions(target=100, games=0, max_game_points=1)),
            0,
            "match.game_to.games must be 1..10",
        ),
        (
            mpb.MatchOptions(deals=mpb.DealsOptions(deals=2)),
            10_001,
            "commission_bps must be",
        ),
        (
            mpb.MatchOptions(
                game_to=mpb.GameToOptions(
                    target=100,
                    games=1,
                    max_game_points=100,
                    scoring=mpb.GameScoring(game_bonus_points=100_001),
                )
            ),
            0,
            "match.game_to.scoring.game_bonus_points must be 0..100000",
        ),
        (
            mpb.MatchOptions(
                hollywood=mpb.HollywoodOptions(
                    target=100, max_game_points=100, scoring=mpb.GameScoring(box_points=200_000)
                )
            ),
            0,
            "match.hollywood.scoring.box_points must be 0..100000",
        ),
        (
            mpb.MatchOptions(hollywood=mpb.HollywoodOptions(target=0, max_game_points=100)),
            0,
            "match.hollywood.target must be",
        ),
        (
            mpb.MatchOptions(
                hollywood=mpb.HollywoodOptions(
                    target=100, max_game_points=0, point_value_hundredths=10
                )
            ),
            0,
            "match.hollywood.max_game_points must be",
        ),
    ],
)
def test_options_out_of_bounds_are_refused_naming_their_request_field(
    options: mpb.MatchOptions, commission: int, message: str
) -> None:
    with pytest.raises(RuleSetError) as caught:
        mw.format_from_pb(options, commission)
    assert mw.option_message(caught.value, options).startswith(message)


def test_match_commands_are_the_seats_own_and_a_rejoin_answers_its_total() -> None:
    assert mw.command_from_pb(mpb.AcceptRejoin(), 2, T0) == fm.AcceptRejoin(seat=2, at_ms=T0)
    assert mw.command_from_pb(mpb.DeclineRejoin(), 1, T0) == fm.DeclineRejoin(seat=1, at_ms=T0)
    assert mw.command_from_pb(mpb.RequestSplit(), 0, T0) == fm.RequestSplit(seat=0, at_ms=T0)
    assert mw.is_match_command("rummy.match.v1.RequestSplit")
    assert not mw.is_match_command("rummy.indian.v1.Drop")
    with pytest.raises(StreamPayloadError):
        mw.command_from_pb(mpb.MatchStarted(), 0, T0)
    assert mw.answer([mpb.Rejoined(seat=1, total=77), mpb.MoneyReserved()]).total == 77
    assert mw.answer([mpb.RejoinDeclined(seat=1)]).total == 0


def test_the_view_of_a_deals_match_shows_chips_deals_left_and_the_result() -> None:
    fmt = FORMATS[2]
    seats = (SeatAccount(0, "a"), SeatAccount(1, "b"))
    state = fmt.initial_state()
    for command in (
        fm.StartMatch(match_id="m", seats=seats, at_ms=T0),
        fm.BeginDeal(at_ms=T0),
        fm.RecordDeal(result=DealResult(points=((0, 0), (1, 30)), winners=(0,)), at_ms=T0),
    ):
        state = fmt.fold(fmt.decide(state, command), state)
    view = mw.view_to_pb(match_view(fmt, state))
    assert view.match_format == "deals-2"
    assert view.HasField("deals_left") and view.deals_left == 1
    assert [(s.seat, s.chips, s.held_hundredths) for s in view.seats] == [
        (0, 190, 1000),
        (1, 130, 1000),
    ]
    assert not view.seats[0].HasField("rejoin_total")
    assert view.WhichOneof("result") is None
    for command in (
        fm.BeginDeal(at_ms=T0),
        fm.RecordDeal(result=DealResult(points=((0, 0), (1, 5)), winners=(0,)), at_ms=T0),
    ):
        state = fmt.fold(fmt.decide(state, command), state)
    view = mw.view_to_pb(match_view(fmt, state))
    assert view.WhichOneof("result") == "ended"
    assert list(view.ended.winners) == [0]
    assert view.ended.settlement.pool_hundredths == 2000
    assert view.ended.settlement.commission_hundredths == 300


def test_game_to_options_recorded_before_the_game_end_scoring_decode_as_they_were() -> None:
    # GameToOptions as written before field 6 (scoring) existed: fields 1-5 only.
    old = mpb.GameToOptions(
        target=100, games=2, point_value_hundredths=10, max_game_points=150
    ).SerializeToString()
    options = mpb.MatchOptions()
    options.game_to.ParseFromString(old)
    fmt = mw.format_from_pb(options, 500)
    assert fmt == make_format(
        "game-to",
        target=100,
        games=2,
        point_value_hundredths=10,
        max_game_points=150,
        commission_bps=500,
    )
    assert isinstance(fmt, GameTo) and fmt.scoring == GameScoring()
    # ... and written back as they were, byte for byte (no empty scoring recorded).
    assert mw.format_to_pb(fmt).game_to.SerializeToString() == old


def _played(
    fmt: MatchFormat, deals: list[tuple[int | None, int]]
) -> tuple[MatchState, list[Message]]:
    """A two-seat match of ``fmt`` (seats 0 and 1) whose deals are won by ``(winner, points
    charged to the other)``; a winner None is a drawn deal (the wall). Returns its state and
    its payloads as the table writes them."""
    seats = (SeatAccount(0, "ann"), SeatAccount(1, "bob"))
    state, out = fmt.initial_state(), []

    def do(command: Command) -> None:
        nonlocal state
        events = fmt.decide(state, command)
        out.extend(mw.events_to_pb(events, state))
        state = fmt.fold(events, state)

    do(fm.StartMatch(match_id="m", seats=seats, at_ms=T0))
    for winner, charged in deals:
        do(fm.BeginDeal(at_ms=T0))
        if winner is None:
            result = DealResult(points=((0, 0), (1, 0)), winners=())
        else:
            points = ((0, 0 if winner == 0 else charged), (1, 0 if winner == 1 else charged))
            result = DealResult(points=points, winners=(winner,))
        do(fm.RecordDeal(result=result, at_ms=T0))
    return state, out


def _sheet(sheet: mpb.ScoreSheet) -> tuple[object, ...]:
    winner = sheet.winner if sheet.HasField("winner") else None
    seats = [(s.seat, s.points, s.boxes, s.bonus, s.total, s.lost_at_cap) for s in sheet.seats]
    return sheet.number, sheet.running, winner, seats


def test_the_view_of_a_gin_game_shows_its_score_sheet_with_boxes_and_the_game_bonus() -> None:
    options = gin_game_to(target=100, games=1, point_value_hundredths=10, max_game_points=300)
    fmt = mw.format_from_pb(options, 500)
    # ann 30, a wall, ann 40, bob 20, ann 35: ann 105 from 3 hands, bob 20 from 1.
    running, _ = _played(fmt, [(0, 30), (None, 0), (0, 40), (1, 20)])
    view = mw.view_to_pb(match_view(fmt, running))
    assert [_sheet(s) for s in view.sheets] == [
        (1, True, None, [(0, 70, 2, 0, 70, False), (1, 20, 1, 0, 20, False)])
    ]
    ended, payloads = _played(fmt, [(0, 30), (None, 0), (0, 40), (1, 20), (0, 35)])
    view = mw.view_to_pb(match_view(fmt, ended))
    # ann 105 + 100 (bob scored) + 3 x 25 = 280; bob 20 + 25 = 45.
    assert [_sheet(s) for s in view.sheets] == [
        (1, False, 0, [(0, 105, 3, 175, 280, False), (1, 20, 1, 25, 45, False)])
    ]
    # bob pays min(280 - 45, 300) x 0.10 = 23.50; 5% = 1.17 (rounded down): ann receives 22.33.
    (game,) = [p for p in payloads if isinstance(p, mpb.GameEnded)]
    assert [(t.seat, t.points) for t in game.totals] == [(0, 280), (1, 45)]
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in game.settlement.lines] == [
        (3000, 2233),
        (3000, -2350),
    ]
    assert game.settlement.commission_hundredths == 117


def test_the_view_of_a_hollywood_match_shows_its_three_columns() -> None:
    options = mpb.MatchOptions(
        hollywood=mpb.HollywoodOptions(
            target=50, point_value_hundredths=10, max_game_points=200, scoring=GIN_SCORING
        )
    )
    fmt = mw.format_from_pb(options, 0)
    assert fmt.name == "hollywood-50" and fmt.hold_hundredths == 3 * 200 * 10
    # ann's 1st win (30): column 1; her 2nd (25): columns 1 and 2, column 1 ends at 55 (bob
    # scored nothing in it: shutout 200, 2 boxes). bob's 1st (40): column 2; his 2nd (20):
    # columns 2 and 3, column 2 ends at 60. ann's 3rd (50): column 3 (the only one running),
    # which ends at 50.
    state, _ = _played(fmt, [(0, 30), (0, 25), (1, 40), (None, 0), (1, 20)])
    view = mw.view_to_pb(match_view(fmt, state))
    assert [_sheet(s) for s in view.sheets] == [
        (1, False, 0, [(0, 55, 2, 250, 305, False), (1, 0, 0, 0, 0, False)]),
        (2, False, 1, [(0, 25, 1, 25, 50, False), (1, 60, 2, 150, 210, False)]),
        (3, True, None, [(0, 0, 0, 0, 0, False), (1, 20, 1, 0, 20, False)]),
    ]
    state, payloads = _played(fmt, [(0, 30), (0, 25), (1, 40), (None, 0), (1, 20), (0, 50)])
    view = mw.view_to_pb(match_view(fmt, state))
    assert _sheet(view.sheets[2]) == (
        3,
        False,
        0,
        [(0, 50, 1, 125, 175, False), (1, 20, 1, 25, 45, False)],
    )
    # Nets: column 1 +200 (305 capped), column 2 -160, column 3 +130: ann +170 points, bob
    # pays 170 x 0.10 = 17.00 of the 60.00 he holds.
    assert view.WhichOneof("result") == "ended" and list(view.ended.winners) == [0]
    (game,) = [p for p in payloads if isinstance(p, mpb.GameEnded)]
    assert (game.game_no, game.winner) == (1, 0)
    assert [(t.seat, t.points) for t in game.totals] == [(0, 170), (1, -170)]
    assert [(ln.held_hundredths, ln.amount_hundredths) for ln in game.settlement.lines] == [
        (6000, 1700),
        (6000, -1700),
    ]
    stakes = [p for p in payloads if isinstance(p, mpb.MoneyReserved)]
    assert [(p.purpose, p.game_no, p.amount_hundredths) for p in stakes] == [("stake", 1, 6000)] * 2
