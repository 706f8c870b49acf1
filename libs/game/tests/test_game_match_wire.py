"""The match wire (rummy.match.v1): options <-> formats, every match event through an envelope
and back to the same rules event, the stake's game number from the state, commands, the view."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy.match.v1 import match_pb2 as mpb
from rummy_game import match_wire as mw
from rummy_game.wire import StreamCodecError
from rummy_platform.envelope import Envelope, decode, encode, event_payloads
from rummy_rules.errors import RuleViolation
from rummy_rules.events import Event, SeatAccount
from rummy_rules.formats import DealResult, MatchFormat, MatchState, make_format, match_view
from rummy_rules.formats import messages as fm
from rummy_rules.rules import RuleSetError

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
    make_format("pool", target=101, entry_cents=500, commission_bps=1000, rejoin=True),
    make_format("pool", target=201, entry_cents=250, commission_bps=500, split=True),
    make_format("deals", deals=2, entry_cents=1000, commission_bps=1500),
    make_format("best-of", deals=3, entry_cents=100, commission_bps=0),
    make_format(
        "game-to",
        target=50,
        games=2,
        point_value_cents=10,
        max_game_points=60,
        commission_bps=800,
        missed_turns_lose_game=True,
    ),
]


def _play(fmt: MatchFormat, data: st.DataObject) -> tuple[list[tuple[Event, MatchState]], str]:
    """A match of ``fmt`` played with drawn deal results, rejoins, splits, leaves and voided
    deals: every event with the state before it."""
    seats = data.draw(st.integers(2, 4), label="seats")
    state = fmt.initial_state()
    out: list[tuple[Event, MatchState]] = []

    def do(command: object) -> None:
        nonlocal state
        try:
            events = fmt.decide(state, command)  # type: ignore[arg-type]
        except RuleViolation:
            return
        for event in events:
            out.append((event, state))
            state = fmt.apply(state, event)

    do(
        fm.StartMatch(
            match_id="m-1",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in range(seats)),
            at_ms=T0,
        )
    )
    for step in range(40):
        if state.is_over:
            break
        at = T0 + step * 1000
        if state.deal_seats:
            move = data.draw(st.sampled_from(["score", "score", "score", "void", "leave", "abort"]))
            if move == "abort" and data.draw(st.integers(0, 3)) == 0:
                do(fm.AbortMatch(reason="closed by an operator", at_ms=at))
                continue
            if move == "void":
                do(fm.RecordDealAborted(reason="dealer gone", at_ms=at))
                continue
            if move == "leave":
                do(fm.LeaveMatch(seat=data.draw(st.sampled_from(state.deal_seats)), at_ms=at))
            dealt = state.deal_seats
            winner = data.draw(st.sampled_from(dealt))
            points = {s: 0 if s == winner else data.draw(st.integers(2, 80)) for s in dealt}
            left = frozenset(s for s, reason in state.out if s in dealt and reason.value == "left")
            result = DealResult(points=tuple(sorted(points.items())), winners=(winner,), left=left)
            do(fm.RecordDeal(result=result, at_ms=at))
        else:
            for seat, _ in state.rejoin_offers:
                cls = data.draw(st.sampled_from([fm.AcceptRejoin, fm.DeclineRejoin]))
                do(cls(seat=seat, at_ms=at))
            if data.draw(st.booleans()):
                for seat in state.active:
                    do(fm.RequestSplit(seat=seat, at_ms=at))
            do(fm.BeginDeal(at_ms=at))
    return out, state.match_id


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
    fm.RejoinOffered(seat=3, total=77, entry_cents=500),
    fm.Rejoined(seat=3, total=77),
    fm.SeatEliminated(seat=2, total=101),
    fm.MatchAborted(reason="closed", released=((0, 500), (1, 500)), at_ms=T0),
    fm.MatchEnded(winners=(0, 1), reason="split", settlement=None, at_ms=T0),
    fm.MoneyReserved(seat=1, amount_cents=500, purpose="rejoin"),
]


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_each_rarer_match_event_reads_back_as_itself(event: Event) -> None:
    assert _through_envelope(mw.event_to_pb(event, MatchState(), "h"), T0) == event


def test_a_games_stakes_carry_the_game_they_are_for() -> None:
    fmt = FORMATS[-1]
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
    arm=st.sampled_from(["pool", "deals", "best_of", "game_to"]),
    entry=st.integers(0, 10**9),
    commission=st.integers(0, 10_000),
    flags=st.tuples(st.booleans(), st.booleans()),
    number=st.integers(0, 3),
)
def test_format_options_read_back_as_the_options_given(
    arm: str, entry: int, commission: int, flags: tuple[bool, bool], number: int
) -> None:
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
    else:
        options = mpb.MatchOptions(
            game_to=mpb.GameToOptions(
                target=100 + number,
                games=1 + number,
                point_value_hundredths=entry % 1000,
                max_game_points=50 + number,
                missed_turns_lose_game=flags[0],
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
    with pytest.raises(StreamCodecError):
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
