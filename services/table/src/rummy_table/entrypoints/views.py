"""The views WatchTable sends and the table states the API names, built from the projection's
tables (under its lock: a table is mutable).

:func:`player_view` is the one place a caller's view is built: the variant's view of the hand
for the caller's seat (rules ``view()``; a spectator gets the public view) plus the table's
seats, and the variant's own part of it (``variant_view``) as the variant's wire packs it.
Never another seat's cards or the stock order while the hand runs.
"""

from __future__ import annotations

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import match_payloads, stream_payloads, variant_wires
from rummy_game.moves import moves_to_pb
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.variant import DeadlineKind
from rummy_table.application.held_table import HeldTable

#: The spectator's seat number for the rules' view (holds no cards).
SPECTATOR = -1

_PHASES = {
    "not_started": api.HAND_PHASE_WAITING,
    "preparing": api.HAND_PHASE_RESERVING,
    "seed_window": api.HAND_PHASE_SEEDING,
    "awaiting_deal": api.HAND_PHASE_DEALING,
    "playing": api.HAND_PHASE_PLAYING,
    "ended": api.HAND_PHASE_ENDED,
    "aborted": api.HAND_PHASE_ABORTED,
}


#: The wire state of a table by :attr:`Table.state_name`.
TABLE_STATES = {
    "open": api.TABLE_STATE_OPEN,
    "closing": api.TABLE_STATE_CLOSING,
    "closed": api.TABLE_STATE_CLOSED,
}


#: Each shoe's wire cards, made once: protobuf copies a message that a view is given
#: (``extend``, ``CopyFrom``), so a view's cards cost a look-up each instead of an index
#: computed and a message built (measured: 34 cards 303 -> 59 us); nobody mutates these. Per
#: shoe, then by ``(rank, id(suit), copy)``: hashing a Card itself runs ``Enum.__hash__``
#: (Python code) for its suit on every look-up (a 4-seat view mid-hand: 61 -> 53 us median);
#: a suit is a module-level singleton, so its id names it for the life of the process.
_WIRE_CARDS: dict[Shoe, dict[tuple[object, int, int], cards_pb2.Card]] = {}


def _wire_cards(shoe: Shoe) -> dict[tuple[object, int, int], cards_pb2.Card]:
    found = _WIRE_CARDS.get(shoe)
    if found is None:  # a few shoes at most
        found = _WIRE_CARDS[shoe] = {}
    return found


def _wire_in(
    card: Card, cards: dict[tuple[object, int, int], cards_pb2.Card], shoe: Shoe
) -> cards_pb2.Card:
    key = (card.rank, id(card.suit), card.copy)
    found = cards.get(key)
    if found is None:  # a few hundred cards per shoe at most: the cache stays small
        found = cards[key] = stream_payloads.card_to_pb(card, shoe)
    return found


def legal_moves(table: HeldTable, seat: int) -> list[api.LegalMove]:
    """The moves ``seat`` may make now in the table's hand (the variant's ``legal_commands``,
    on the wire); ``[]`` when it has none or no hand is dealt."""
    if table.hand is None or table.ctx is None:
        return []
    commands = table.variant.legal_commands(table.hand, seat)
    if not commands:
        return []
    wire = variant_wires.lookup(table.ctx.rule_set.variant)
    return moves_to_pb(commands, wire, table.ctx.shoe)


def player_view(table: HeldTable, account_id: str | None) -> api.PlayerView:
    """What ``account_id`` (None: a spectator) may see of ``table`` now, with the moves its
    seat may make (:func:`legal_moves`)."""
    seat = table.seat_of(account_id) if account_id is not None else None
    view = api.PlayerView(
        table_id=table.table_id,
        stream_version=table.version,
        table_state=TABLE_STATES[table.state_name],
    )
    if seat is not None:
        view.my_seat = seat
    if table.match is not None and table.match.state.match_id:
        view.match.CopyFrom(match_payloads.view_to_pb(table.match.view()))
    seat_views: dict[int, api.SeatView] = {
        s: api.SeatView(
            seat=s,
            account_id=info.account_id,
            status="seated",
            sitting_out_reason=info.sitting_out_reason,
            seated=True,
        )
        for s, info in table.seats.items()
    }
    if table.hand is None or table.ctx is None:
        view.phase = api.HAND_PHASE_WAITING
        view.seats.extend(seat_views[s] for s in sorted(seat_views))
        return view
    ctx, shoe = table.ctx, table.ctx.shoe
    in_hand = seat if seat is not None and seat in ctx.accounts else SPECTATOR
    hand = table.variant.view(table.hand, in_hand)
    view.hand_id = hand.hand_id
    view.hand_no = table.hand_no
    view.phase = _PHASES.get(hand.phase, api.HAND_PHASE_UNSPECIFIED)
    wire = _wire_cards(shoe)
    view.my_cards.extend([_wire_in(c, wire, shoe) for c in hand.cards])
    view.dealer_seat = ctx.dealer_seat
    if hand.wild_cut is not None:
        view.wild_cut.CopyFrom(_wire_in(hand.wild_cut, wire, shoe))
    view.discard_pile.extend([_wire_in(c, wire, shoe) for c in hand.discard_pile])
    view.stock_count = hand.stock_count
    view.turn_no = hand.turn_no
    if hand.turn_seat is not None:
        view.turn_seat = hand.turn_seat
    if hand.turn_deadline_ms is not None:
        view.turn_deadline.CopyFrom(stream_payloads.ms_to_timestamp(hand.turn_deadline_ms))
    deadline = table.variant.deadline(table.hand)
    if deadline is not None and deadline.kind is DeadlineKind.SEED_WINDOW:
        view.seed_deadline.CopyFrom(stream_payloads.ms_to_timestamp(deadline.due_ms))
    view.has_drawn = hand.has_drawn
    if in_hand != SPECTATOR:
        view.legal_moves.extend(legal_moves(table, in_hand))
    if hand.variant_view is not None:
        own = variant_wires.lookup(ctx.rule_set.variant).view_to_pb(hand.variant_view, shoe)
        if own is not None:
            view.variant_view.Pack(own)
    if hand.commitment:
        view.server_commitment_sha256 = bytes.fromhex(hand.commitment)
    for s in hand.seats:
        seat_view = seat_views.get(s.seat) or api.SeatView(seat=s.seat)
        seat_view.account_id = s.account_id
        seat_view.card_count = s.card_count
        seat_view.dealt_in = True
        seat_view.out = s.status not in ("waiting", "playing", "won")
        seat_view.missed_turns_in_a_row = s.misses_in_a_row
        seat_view.status = s.status
        seat_views[s.seat] = seat_view
    view.seats.extend(seat_views[s] for s in sorted(seat_views))
    result = table.results.get(hand.hand_id)
    if result is not None:
        view.result.CopyFrom(result)
    aborted = getattr(hand.result, "reason", "") if hand.phase == "aborted" else ""
    view.aborted_reason = aborted
    view.voided_reason = table.voided.get(hand.hand_id, "")
    return view
