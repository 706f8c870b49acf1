"""Rules events <-> table-stream payloads: the one home of that mapping.

The table stream (topic ``table-events``) holds protobuf payloads (``rummy.table.v1`` events, and
the ledger / fairness / dealer payloads the table re-records as facts). The rules library speaks
frozen dataclasses (``rummy_rules.events`` and each variant's own). This module turns one
into the other, exactly: ``from_payload(to_payload(e, ctx), ctx) == (e,)`` for every hand event,
so folding the stream through the rules gives the live state byte for byte
(``docs/rules/promises.md#replay-is-exact``).

Conventions:

- cards travel as their index in the hand's shoe (``rummy.common.v1.Card.index``, face for people);
- times inside rules events (``*_ms``) travel as ``google.protobuf.Timestamp`` deadlines, and the
  ``at_ms`` of ``HandStarted`` / ``HandEnded`` / ``HandAborted`` is the envelope's ``occurred_at``
  (the table stamps every envelope with the ``at_ms`` of the command that caused it);
- a variant's own events (``Declared`` ...), its options and its commands map through its
  :class:`rummy_game.variant_wire.VariantWire` (:mod:`rummy_game.variant_wires`, by the hand's
  variant);
- a ``StakeReserved`` travels as the ledger's ``StakesReserved`` with one reservation,
  ``SeedCommitted`` / ``HandDealt`` / ``StockReshuffled`` as the fairness and dealer payloads
  (the table re-records the other service's payload, see ``rummy/table/v1/events.proto``).

Decoding a hand payload needs the hand's context (its id, rule set, seats), built from its
``HandStarted`` with :func:`hand_context`. Ops' replay tool imports this module.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_rules.settlement import Settlement, SettlementLine, reservation_hundredths
from rummy_rules.shuffle import SeatHand

from . import upcast, variant_wires
from .variant_wire import (
    HandContext,
    StreamPayloadError,
    VariantWire,
    card_from_pb,
    card_to_pb,
    cards_from_pb,
    cards_to_pb,
    given,
)

__all__ = ["HandContext", "StreamPayloadError", "card_from_pb", "card_to_pb"]

# -- rule sets ---------------------------------------------------------------------------------

#: Seconds after the last seat change or hand end before a hand may start, when a table's options
#: leave it out (a table option, not a rule of the hand).
DEFAULT_START_DELAY_SECONDS = 5


#: The request's name of each generic rule-set option (``rummy_rules.rules.RuleSetError.option``);
#: a variant's own options are named by its wire (``VariantWire.option_names``).
WIRE_OPTION_NAMES = {
    "seats": "seat_count",
    "point_value_hundredths": "point_value_hundredths",
    "commission_bps": "commission_bps",
    "max_missed_turns": "rule_set.max_missed_turns",
    "turn_seconds": "rule_set.turn_seconds",
    "seed_window_seconds": "rule_set.seed_window_seconds",
    "start_delay_seconds": "rule_set.start_delay_seconds",
    "variant": "rule_set.variant",
}


def wire_message(error: RuleSetError, variant: str = "") -> str:
    """The rules' refusal of an option, naming the request field (``rule_set.first_drop_points
    must be 0..130 (...), got 150``); ``variant``: the rule set's variant, whose wire names its
    own options (``""``: none, the generic options' names only)."""
    names = dict(WIRE_OPTION_NAMES)
    with suppress(variant_wires.UnknownWire):
        names.update(variant_wires.lookup(variant).option_names)
    return error.describe(names.get(error.option, error.option))


#: The variant a rule set names (left out: the legacy variant): the upcast's
#: (:func:`rummy_game.upcast.variant_of`), the one reading of a rule set that names none.
variant_of = upcast.variant_of


def rule_set_from_pb(
    options: cards_pb2.RuleSet,
    seats: int,
    point_value_hundredths: int,
    commission_bps: int,
) -> RuleSet:
    """The rules library's rule set for a table's options (``rummy.common.v1.RuleSet``).

    The variant is ``options.variant`` (left out: the legacy variant, ``indian-points``), found in
    ``rummy_rules.registry`` and :mod:`rummy_game.variant_wires`; the rule set starts as its house
    rule set (``Variant.house_rule_set``: which seat counts it plays, its clock, its options), the
    generic options (``max_missed_turns``, ``turn_seconds``, ``seed_window_seconds``) and the
    variant's own (its wire reads its arm of ``variant_options``) replace the house rules they
    give, an option set is taken as it is, zero included; the variant checks the result
    (``Variant.check_rule_set``). ``point_value_hundredths`` in hundredths of a House Token a point,
    ``commission_bps`` in basis points (a rule set read from a record:
    :func:`recorded_rule_set_from_pb`). Raises RuleSetError (a ValueError) for an unknown variant
    or any value the rules' validation refuses (a seat count the variant does not play, a turn
    of 0 s, a penalty above the most a hand can cost); :func:`wire_message` names the request
    field.
    """
    name = variant_of(options)
    try:
        if not name:  # set, and empty
            raise registry.UnknownVariant(name)
        variant = registry.lookup(name)
        wire = variant_wires.lookup(name)
    except (registry.UnknownVariant, variant_wires.UnknownWire):
        known = ", ".join(repr(n) for n in registry.names())
        raise RuleSetError("variant", f"a variant played here ({known})", repr(name)) from None
    house = variant.house_rule_set(seats, point_value_hundredths, commission_bps)

    house = replace(
        house,
        max_missed_turns=given(options, "max_missed_turns", house.max_missed_turns),
        turn_seconds=given(options, "turn_seconds", house.turn_seconds),
        seed_window_seconds=given(options, "seed_window_seconds", house.seed_window_seconds),
    )
    rules = wire.options_from_pb(options, house)
    variant.check_rule_set(rules)
    return rules


def recorded_rule_set_from_pb(
    options: cards_pb2.RuleSet, seats: int, point_value_hundredths: int, commission_bps: int
) -> RuleSet:
    """The rule set a recorded ``TableOpened`` or ``HandStarted`` carries, as it was played.

    :func:`rule_set_from_pb` of the record upcast to the current shape
    (:func:`rummy_game.upcast.rule_set` at ``seats``: an option a record of an older writer left
    out is read as that writer meant it, Indian points: a switch missing there was off, the
    options in the flat fields only are its arm's, on the house shoes). Raises RuleSetError as
    :func:`rule_set_from_pb`.
    """
    current = upcast.rule_set(options, seats)
    return rule_set_from_pb(current, seats, point_value_hundredths, commission_bps)


def start_delay_seconds_from_pb(options: cards_pb2.RuleSet) -> int:
    """A table's start delay in seconds: the option, or ``DEFAULT_START_DELAY_SECONDS`` when left
    out (an explicit 0 starts a hand as soon as enough players are seated)."""
    if options.HasField("start_delay_seconds"):
        return options.start_delay_seconds
    return DEFAULT_START_DELAY_SECONDS


def rule_set_to_pb(rules: RuleSet, start_delay_seconds: int | None) -> cards_pb2.RuleSet:
    """The wire options of ``rules``, every option set (so a record never depends on defaults);
    inverse of :func:`rule_set_from_pb`. ``start_delay_seconds`` None leaves the start delay out
    (a hand's ``HandStarted`` does not carry the table's start delay). The variant's wire writes
    its own options. Raises UnknownWire for a variant without a wire."""
    options = cards_pb2.RuleSet(
        variant=rules.variant,
        max_missed_turns=rules.max_missed_turns,
        turn_seconds=rules.turn_seconds,
        seed_window_seconds=rules.seed_window_seconds,
    )
    variant_wires.lookup(rules.variant).options_to_pb(rules, options)
    if start_delay_seconds is not None:
        options.start_delay_seconds = start_delay_seconds
    return options


# -- small values ------------------------------------------------------------------------------


def ms_to_timestamp(ms: int) -> Timestamp:
    ts = Timestamp()
    ts.FromMilliseconds(ms)
    return ts


def timestamp_to_ms(ts: Timestamp) -> int:
    return int(ts.ToMilliseconds())


def ms_to_datetime(ms: int) -> datetime:
    """Milliseconds since the epoch -> an aware UTC datetime (exact)."""
    return datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=(ms % 1000) * 1000)


def datetime_to_ms(at: datetime) -> int:
    """An aware datetime -> whole milliseconds since the epoch (exact for ms-stamped times)."""
    delta = at - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_cards = cards_to_pb
_uncards = cards_from_pb


def shoe_pb(shoe: Shoe) -> cards_pb2.ShoeSpec:
    return cards_pb2.ShoeSpec(decks=shoe.decks, printed_jokers=shoe.printed_jokers)


_DRAW_SOURCE = {
    ev.DrawSource.STOCK: pb.DRAW_SOURCE_STOCK,
    ev.DrawSource.DISCARD_PILE: pb.DRAW_SOURCE_DISCARD_PILE,
}
_DRAW_SOURCE_BACK = {v: k for k, v in _DRAW_SOURCE.items()}

# -- the hand's context ------------------------------------------------------------------------


def hand_context(started: pb.HandStarted) -> HandContext:
    """The context of the hand ``started`` begins. Raises ValueError for refused options."""
    rules = recorded_rule_set_from_pb(
        started.rule_set,
        started.seat_count,
        started.point_value_hundredths,
        started.commission_bps,
    )
    return HandContext(
        started.hand_id,
        started.hand_no,
        rules,
        {s.seat: s.account_id for s in started.seats},
        started.dealer_seat,
    )


# -- encoding ----------------------------------------------------------------------------------


def hand_started_to_pb(e: ev.HandStarted, hand_no: int) -> pb.HandStarted:
    """The HandStarted payload with what ledger (reservation per seat), fairness and dealer (rule
    set, shoe, seats) need."""
    rules = e.rule_set
    return pb.HandStarted(
        hand_id=e.hand_id,
        hand_no=hand_no,
        seats=[cards_pb2.Seat(seat=s.seat, account_id=s.account_id) for s in e.seats],
        dealer_seat=e.dealer_seat,
        rule_set=rule_set_to_pb(rules, None),
        point_value_hundredths=rules.point_value_hundredths,
        commission_bps=rules.commission_bps,
        shoe=shoe_pb(rules.shoe),
        reservation_hundredths=reservation_hundredths(rules),
        seat_count=rules.seats,
    )


def to_payload(  # noqa: C901 - one branch per event type
    event: Event,
    ctx: HandContext,
    *,
    top_discard: Card | None = None,
    automatic: bool = False,
    wild_cut: Card | None = None,
) -> Message:
    """The table-stream payload of a rules event of hand ``ctx`` (not HandStarted: see
    :func:`hand_started_to_pb`). ``top_discard``: the discard pile's top after a StockExhausted;
    ``automatic``: a draw or discard played for a timed-out seat; ``wild_cut``: the hand's cut card
    (for deadwood points in a HandEnded). Raises StreamPayloadError for an unknown event."""
    shoe, hand_id = ctx.shoe, ctx.hand_id
    if isinstance(event, ev.StakeReserved):
        return ledger_pb.StakesReserved(
            hand_id=hand_id,
            reservations=[
                ledger_pb.Reservation(
                    seat=event.seat,
                    account_id=ctx.accounts.get(event.seat, ""),
                    amount_hundredths=event.amount_hundredths,
                )
            ],
        )
    if isinstance(event, ev.SeedCommitted):
        return fairness_pb.SeedCommitted(
            hand_id=hand_id, commitment_sha256=bytes.fromhex(event.commitment)
        )
    if isinstance(event, ev.SeedWindowOpened):
        return pb.SeedWindowOpened(hand_id=hand_id, deadline=ms_to_timestamp(event.deadline_ms))
    if isinstance(event, ev.ClientSeedContributed):
        return pb.ClientSeedContributed(
            hand_id=hand_id, seat=event.seat, client_seed=bytes.fromhex(event.seed_hex)
        )
    if isinstance(event, ev.SeedsLocked):
        return pb.SeedsLocked(
            hand_id=hand_id,
            server_commitment_sha256=bytes.fromhex(event.commitment),
            client_seeds=[
                pb.ClientSeed(seat=s.seat, client_seed=bytes.fromhex(s.seed_hex))
                for s in event.client_seeds
            ],
            dealer_seat=ctx.dealer_seat,
            shoe=shoe_pb(shoe),
            hand_size=ctx.rule_set.hand_size,
            variant=ctx.rule_set.variant,
        )
    if isinstance(event, ev.HandDealt):
        return dealer_pb.HandDealt(
            hand_id=hand_id,
            hands=[
                dealer_pb.SeatHand(seat=h.seat, cards=_cards(h.cards, shoe)) for h in event.hands
            ],
            wild_cut=card_to_pb(event.wild_cut, shoe) if event.wild_cut is not None else None,
            first_open=card_to_pb(event.first_open, shoe),
            stock=_cards(event.stock, shoe),
        )
    if isinstance(event, ev.TurnStarted):
        return pb.TurnStarted(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            deadline=ms_to_timestamp(event.deadline_ms),
        )
    if isinstance(event, ev.CardDrawn):
        assert event.card is not None, "the table stream holds unredacted draws"
        return pb.CardDrawn(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            source=_DRAW_SOURCE[event.source],
            card=card_to_pb(event.card, shoe),
            automatic=automatic,
        )
    if isinstance(event, ev.CardDiscarded):
        return pb.CardDiscarded(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            card=card_to_pb(event.card, shoe),
            automatic=automatic,
        )
    if isinstance(event, ev.TurnTimedOut):
        return pb.TurnTimedOut(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            misses_in_a_row=event.misses_in_a_row,
        )
    if isinstance(event, ev.StockExhausted):
        return pb.StockExhausted(
            hand_id=hand_id,
            turn_no=event.turn_no,
            reshuffle_no=event.reshuffle_no,
            cards=_cards(event.cards, shoe),
            top_discard=card_to_pb(top_discard, shoe) if top_discard is not None else None,
            shoe=shoe_pb(shoe),
        )
    if isinstance(event, ev.StockReshuffled):
        return dealer_pb.StockReshuffled(
            hand_id=hand_id,
            reshuffle_no=event.reshuffle_no,
            stock=_cards(event.stock, shoe),
            kept_top_discard=card_to_pb(top_discard, shoe) if top_discard is not None else None,
        )
    if isinstance(event, ev.HandEnded):
        return hand_ended_to_pb(event, ctx, wild_cut)
    if isinstance(event, ev.HandAborted):
        return pb.HandAborted(hand_id=hand_id, reason=event.reason)
    own = _wire(ctx).event_to_pb(event, ctx)
    if own is None:
        raise StreamPayloadError(f"{type(event).__name__} has no table-stream payload")
    return own


def hand_ended_to_pb(
    e: ev.HandEnded, ctx: HandContext, wild_cut: Card | None = None
) -> pb.HandEnded:
    """Every seat's result and the money, as GetHandResult and the ledger see them; each seat's
    ``Arrangement.deadwood_points`` is what its deadwood counts by the hand's variant
    (``Variant.deadwood_points``, under ``wild_cut``: the hand's cut card, None if it cut none).
    Raises ``rummy_rules.registry.UnknownVariant`` for a hand whose variant is not installed."""
    shoe = ctx.shoe
    variant = registry.lookup(ctx.rule_set.variant)
    s = e.settlement
    return pb.HandEnded(
        hand_id=ctx.hand_id,
        winner_seat=e.winner_seat,
        results=[
            pb.SeatResult(
                seat=r.seat,
                account_id=r.account_id,
                outcome=r.outcome,
                points=r.points,
                cards=_cards(r.cards, shoe),
                arrangement=cards_pb2.Arrangement(
                    melds=[
                        cards_pb2.Meld(kind=m.kind, cards=_cards(m.cards, shoe)) for m in r.melds
                    ],
                    deadwood=_cards(r.deadwood, shoe),
                    deadwood_points=variant.deadwood_points(ctx.rule_set, wild_cut, r.deadwood),
                ),
                score=r.score,
            )
            for r in e.results
        ],
        settlement=[
            pb.SettlementLine(
                seat=line.seat,
                account_id=ctx.accounts.get(line.seat, ""),
                points=line.points,
                amount_hundredths=line.amount_hundredths,
            )
            for line in s.lines
        ],
        commission_hundredths=s.commission_hundredths,
        point_value_hundredths=s.point_value_hundredths,
        commission_bps=s.commission_bps,
        co_winner_seats=s.co_winner_seats,
    )


# -- decoding ----------------------------------------------------------------------------------


def hand_started_from_pb(started: pb.HandStarted, at_ms: int) -> ev.HandStarted:
    ctx = hand_context(started)
    return ev.HandStarted(
        hand_id=started.hand_id,
        seats=tuple(ev.SeatAccount(s.seat, s.account_id) for s in started.seats),
        dealer_seat=started.dealer_seat,
        rule_set=ctx.rule_set,
        at_ms=at_ms,
    )


#: Payload types that carry a hand's generic rules events (besides HandStarted); each variant's
#: own are its wire's ``event_types`` (:func:`is_hand_payload`).
HAND_PAYLOADS: frozenset[type[Message]] = frozenset(
    {
        ledger_pb.StakesReserved,
        fairness_pb.SeedCommitted,
        pb.SeedWindowOpened,
        pb.ClientSeedContributed,
        pb.SeedsLocked,
        dealer_pb.HandDealt,
        pb.TurnStarted,
        pb.CardDrawn,
        pb.CardDiscarded,
        pb.TurnTimedOut,
        pb.StockExhausted,
        dealer_pb.StockReshuffled,
        pb.HandEnded,
        pb.HandAborted,
    }
)


def is_hand_payload(payload: Message) -> bool:
    """Whether ``payload`` carries rules events of a hand (besides HandStarted): a generic hand
    payload or one of a registered variant's own events."""
    return type(payload) in HAND_PAYLOADS or variant_wires.is_variant_event(payload)


def _wire(ctx: HandContext) -> VariantWire:
    try:
        return variant_wires.lookup(ctx.rule_set.variant)
    except variant_wires.UnknownWire as exc:
        raise StreamPayloadError(str(exc)) from None


def from_payload(payload: Message, ctx: HandContext, at_ms: int) -> tuple[Event, ...]:  # noqa: C901
    """The rules events a hand payload of hand ``ctx`` stands for (``at_ms``: the envelope's
    occurred-at). Raises StreamPayloadError for a payload that is not a hand event."""
    shoe = ctx.shoe
    if isinstance(payload, ledger_pb.StakesReserved):
        return tuple(
            ev.StakeReserved(seat=r.seat, amount_hundredths=r.amount_hundredths)
            for r in payload.reservations
        )
    if isinstance(payload, fairness_pb.SeedCommitted):
        return (ev.SeedCommitted(commitment=payload.commitment_sha256.hex()),)
    if isinstance(payload, pb.SeedWindowOpened):
        return (ev.SeedWindowOpened(deadline_ms=timestamp_to_ms(payload.deadline)),)
    if isinstance(payload, pb.ClientSeedContributed):
        return (ev.ClientSeedContributed(seat=payload.seat, seed_hex=payload.client_seed.hex()),)
    if isinstance(payload, pb.SeedsLocked):
        return (
            ev.SeedsLocked(
                commitment=payload.server_commitment_sha256.hex(),
                client_seeds=tuple(
                    ev.SeatSeed(s.seat, s.client_seed.hex()) for s in payload.client_seeds
                ),
            ),
        )
    if isinstance(payload, dealer_pb.HandDealt):
        stock = _uncards(payload.stock, shoe)
        return (
            ev.HandDealt(
                hands=tuple(
                    SeatHand(h.seat, _uncards(h.cards, shoe))
                    for h in sorted(payload.hands, key=lambda h: h.seat)
                ),
                wild_cut=card_from_pb(payload.wild_cut, shoe)
                if payload.HasField("wild_cut")
                else None,
                first_open=card_from_pb(payload.first_open, shoe),
                stock=stock,
                stock_count=len(stock),
            ),
        )
    if isinstance(payload, pb.TurnStarted):
        return (
            ev.TurnStarted(
                seat=payload.seat,
                turn_no=payload.turn_no,
                deadline_ms=timestamp_to_ms(payload.deadline),
            ),
        )
    if isinstance(payload, pb.CardDrawn):
        return (
            ev.CardDrawn(
                seat=payload.seat,
                turn_no=payload.turn_no,
                source=_DRAW_SOURCE_BACK[payload.source],
                card=card_from_pb(payload.card, shoe),
            ),
        )
    if isinstance(payload, pb.CardDiscarded):
        return (
            ev.CardDiscarded(
                seat=payload.seat, turn_no=payload.turn_no, card=card_from_pb(payload.card, shoe)
            ),
        )
    if isinstance(payload, pb.TurnTimedOut):
        return (
            ev.TurnTimedOut(
                seat=payload.seat, turn_no=payload.turn_no, misses_in_a_row=payload.misses_in_a_row
            ),
        )
    if isinstance(payload, pb.StockExhausted):
        return (
            ev.StockExhausted(
                turn_no=payload.turn_no,
                reshuffle_no=payload.reshuffle_no,
                cards=_uncards(payload.cards, shoe),
            ),
        )
    if isinstance(payload, dealer_pb.StockReshuffled):
        stock = _uncards(payload.stock, shoe)
        return (
            ev.StockReshuffled(
                reshuffle_no=payload.reshuffle_no, stock=stock, stock_count=len(stock)
            ),
        )
    if isinstance(payload, pb.HandEnded):
        return (hand_ended_from_pb(payload, ctx, at_ms),)
    if isinstance(payload, pb.HandAborted):
        return (ev.HandAborted(reason=payload.reason, at_ms=at_ms),)
    wire = _wire(ctx)
    if type(payload) in wire.event_types:
        return wire.event_from_pb(payload, ctx)
    raise StreamPayloadError(f"{type(payload).DESCRIPTOR.full_name} is not a hand event")


def hand_ended_from_pb(payload: pb.HandEnded, ctx: HandContext, at_ms: int) -> ev.HandEnded:
    shoe = ctx.shoe
    return ev.HandEnded(
        winner_seat=payload.winner_seat,
        results=tuple(
            ev.SeatResult(
                seat=r.seat,
                account_id=r.account_id,
                outcome=r.outcome,
                points=r.points,
                cards=_uncards(r.cards, shoe),
                melds=tuple(
                    ev.ScoredGroup(m.kind, _uncards(m.cards, shoe)) for m in r.arrangement.melds
                ),
                deadwood=_uncards(r.arrangement.deadwood, shoe),
                score=r.score,
            )
            for r in payload.results
        ),
        settlement=Settlement(
            winner_seat=payload.winner_seat,
            point_value_hundredths=payload.point_value_hundredths,
            commission_bps=payload.commission_bps,
            lines=tuple(
                SettlementLine(line.seat, line.points, line.amount_hundredths)
                for line in payload.settlement
            ),
            commission_hundredths=payload.commission_hundredths,
            co_winner_seats=tuple(payload.co_winner_seats),
        ),
        at_ms=at_ms,
    )
