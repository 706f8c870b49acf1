"""What ``rummy watch`` shows of a table's public view (a spectator's ``PlayerView``, as the table
service streams it to an operator): the table's state now (:func:`state_lines`) and each change
from one view to the next as one line (:func:`event_lines`).

Nothing here knows one game: the phases, turns, the pile, the stock's size and each seat's card
count and status are the generic view's; the variant's own public part (``variant_view``: gin's
knock, Rummy 500's melds) is shown by its bundle's ``view_lines``
(:func:`rummy_game.bundle.variant_view_lines`); a hand's result and a match by the lines ``rummy
demo`` prints (:func:`rummy_ops.demo.report.hand_line`, :func:`~rummy_ops.demo.report.match_line`).
A spectator's view holds no hand (``my_cards`` is empty) and never the stock's order; the result
carries every hand once the hand has ended, and none of its cards is shown here either: only the
points, the outcomes and the money.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rummy.table.v1 import table_service_pb2 as api
from rummy_game.bundle import variant_view_lines
from rummy_ops.demo.report import HandRecord, MatchRecord, hand_line, match_line, sheet_lines
from rummy_ops.money import stakes_of
from rummy_ops.table_names import state_name

_IN_PLAY = frozenset({api.HAND_PHASE_PLAYING})
_OVER = frozenset({api.HAND_PHASE_ENDED, api.HAND_PHASE_ABORTED})


@dataclass(frozen=True)
class Watched:
    """The table watched, as ListTables lists it: what the views do not carry (its name, variant
    and format)."""

    summary: api.TableSummary

    @property
    def name(self) -> str:
        return self.summary.name or self.summary.table_id

    @property
    def variant(self) -> str:
        return self.summary.variant


def phase_name(phase: api.HandPhase.ValueType) -> str:
    """``waiting``, ``reserving``, ``seeding``, ``dealing``, ``playing``, ``ended``, ``aborted``."""
    return api.HandPhase.Name(phase).removeprefix("HAND_PHASE_").lower()


def _clock(stamp: object) -> str:
    return str(stamp.ToDatetime().strftime("%H:%M:%S UTC"))  # type: ignore[attr-defined]


def _account(view: api.PlayerView, seat: int) -> str:
    found = next((s for s in view.seats if s.seat == seat), None)
    return found.account_id if found is not None else "?"


def turn_line(view: api.PlayerView) -> str:
    """Whose turn it is and its deadline (``turn 4: s1 bob to discard, until 14:02:07 UTC``);
    while the client seeds are taken, their deadline; ``""`` otherwise."""
    if view.phase == api.HAND_PHASE_SEEDING and view.HasField("seed_deadline"):
        return f"client seeds until {_clock(view.seed_deadline)}"
    if view.phase not in _IN_PLAY or not view.turn_no:
        return ""
    to = "discard" if view.has_drawn else "draw"
    until = f", until {_clock(view.turn_deadline)}" if view.HasField("turn_deadline") else ""
    return f"turn {view.turn_no}: s{view.turn_seat} {_account(view, view.turn_seat)} to {to}{until}"


def cards_line(view: api.PlayerView) -> str:
    """The public cards and counts: the cut, the pile's size and its top, the stock's size
    (``cut 7D  pile 3 top QS  stock 71``); ``""`` before the deal."""
    if view.phase not in _IN_PLAY | _OVER or not view.hand_id:
        return ""
    parts = []
    if view.HasField("wild_cut"):
        parts.append(f"cut {view.wild_cut.face}")
    top = f" top {view.discard_pile[-1].face}" if view.discard_pile else ""
    parts.append(f"pile {len(view.discard_pile)}{top}")
    parts.append(f"stock {view.stock_count}")
    return "  ".join(parts)


def seat_line(seat: api.SeatView) -> str:
    """``s2 carol  13 cards  playing`` (the count only for a seat dealt in; ``missed 1``: its
    timed-out turns in a row; ``left``: dealt in, no longer seated; why it sits out)."""
    parts = [f"s{seat.seat} {seat.account_id}"]
    if seat.dealt_in:
        parts.append(f"{seat.card_count} cards")
    parts.append(seat.status or "seated")
    if seat.missed_turns_in_a_row:
        parts.append(f"missed {seat.missed_turns_in_a_row}")
    if seat.dealt_in and not seat.seated:
        parts.append("left")
    if seat.sitting_out_reason:
        parts.append(f"sits out: {seat.sitting_out_reason}")
    return "  ".join(parts)


def result_line(table: Watched, view: api.PlayerView) -> str:
    """The hand's end as ``rummy demo`` prints it (winner, points and marks, commission, net), or
    why it was aborted or voided; ``""`` while it runs."""
    if view.phase == api.HAND_PHASE_ABORTED:
        return f"hand {view.hand_no} aborted: {view.aborted_reason or 'aborted'}"
    if view.phase != api.HAND_PHASE_ENDED or not view.HasField("result"):
        return ""
    record = HandRecord(
        table.name, view.table_id, view.hand_no, view.hand_id, view.result, "", table.variant
    )
    # demo's line less its table column, its hand number unpadded: "hand 3  winner s1  ..."
    line = re.sub(r"^hand +", "hand ", hand_line(record).removeprefix(table.name).strip())
    if view.voided_reason:
        line += f"  VOID: {view.voided_reason} (no token moved)"
    return line


def match_lines(table: Watched, view: api.PlayerView) -> list[str]:
    """The table's match (``rummy demo``'s match line and score sheets); ``[]`` at a points
    table."""
    if not view.HasField("match") or not view.match.match_id:
        return []
    head = match_line(MatchRecord(table.name, view.table_id, view.match))
    return [head.removeprefix(table.name).strip(), *sheet_lines(view.match)]


def state_lines(table: Watched, view: api.PlayerView) -> list[str]:
    """The table now, one fact a line: the table, the hand and its phase, whose turn, the public
    cards and counts, each seat, the variant's own lines, the match, the result."""
    stakes = stakes_of(
        table.summary.match if table.summary.HasField("match") else None,
        table.summary.commission_bps,
        table.summary.point_value_hundredths,
    )
    lines = [
        f"table {table.name} ({view.table_id})  {table.variant}  {stakes.format_name}  "
        f"{stakes.text()}  {state_name(view.table_state)}  v{view.stream_version}"
    ]
    if view.hand_id:
        lines.append(f"hand {view.hand_no} ({view.hand_id})  {phase_name(view.phase)}  "
                     f"dealer s{view.dealer_seat}")  # fmt: skip
    else:
        lines.append("no hand in play")
    lines += [line for line in (turn_line(view), cards_line(view)) if line]
    lines += [seat_line(s) for s in view.seats]
    lines += variant_view_lines(table.variant, view.variant_view)
    lines += match_lines(table, view)
    result = result_line(table, view)
    if result:
        lines.append(result)
    return lines


def _seat_changes(before: api.PlayerView, after: api.PlayerView) -> list[str]:
    old = {s.seat: s for s in before.seats}
    out = []
    for seat in after.seats:
        was = old.get(seat.seat)
        who = f"s{seat.seat} {seat.account_id}"
        if seat.seated and (was is None or not was.seated or was.account_id != seat.account_id):
            out.append(f"{who} took the seat")
        elif was is not None and was.seated and not seat.seated:
            out.append(f"{who} left")
        if was is None or before.hand_id != after.hand_id:
            continue
        if seat.status != was.status and seat.status not in ("waiting", "playing"):
            out.append(f"{who}: {seat.status}")
        if seat.missed_turns_in_a_row > was.missed_turns_in_a_row:
            out.append(f"{who} missed a turn ({seat.missed_turns_in_a_row} in a row)")
        if seat.sitting_out_reason and seat.sitting_out_reason != was.sitting_out_reason:
            out.append(f"{who} sits out: {seat.sitting_out_reason}")
    gone = {s.seat for s in after.seats}
    out += [
        f"s{s.seat} {s.account_id} left" for s in before.seats if s.seat not in gone and s.seated
    ]
    return out


def _card_moves(before: api.PlayerView, after: api.PlayerView) -> list[str]:
    """The draws and discards between two views of one hand in play, by the seat on turn before
    (the stock by its count only: a card drawn from it is the drawer's)."""
    if before.phase not in _IN_PLAY or after.hand_id != before.hand_id:
        return []
    who = f"s{before.turn_seat}"
    out = []
    old = [c.face for c in before.discard_pile]
    new = [c.face for c in after.discard_pile]
    kept = 0
    while kept < min(len(old), len(new)) and old[kept] == new[kept]:
        kept += 1
    if after.stock_count > before.stock_count:  # the pile, shuffled, made the stock again
        return [f"the stock was made again: {after.stock_count} cards"]
    drawn = before.stock_count - after.stock_count
    if drawn > 0:
        out.append(f"{who} drew from the stock" + (f" ({drawn} cards)" if drawn > 1 else ""))
    taken = old[kept:]
    if taken:
        out.append(f"{who} took {' '.join(taken)} from the pile")
    laid = new[kept:]
    if laid:
        out.append(f"{who} discarded {' '.join(laid)}")
    return out


def event_lines(table: Watched, before: api.PlayerView | None, after: api.PlayerView) -> list[str]:
    """What changed from ``before`` to ``after`` (two views of one table, ``after`` the later),
    one line each: seats taken and left, a hand begun, its phases, the deal, draws and discards,
    each seat's status, whose turn, the variant's own new lines, the match, the result, the
    table closing. With no ``before``: :func:`state_lines` of ``after``."""
    if before is None:
        return state_lines(table, after)
    out: list[str] = []
    new_hand = after.hand_id != before.hand_id
    if new_hand and after.hand_id:
        out.append(f"hand {after.hand_no} begun ({after.hand_id}), dealer s{after.dealer_seat}")
    if after.hand_id and (new_hand or after.phase != before.phase):
        if after.phase == api.HAND_PHASE_PLAYING:
            open_ = f", open {after.discard_pile[0].face}" if after.discard_pile else ""
            cut = f"cut {after.wild_cut.face}, " if after.HasField("wild_cut") else ""
            out.append(f"dealt: {cut}stock {after.stock_count}{open_}")
        elif after.phase not in _OVER:
            out.append(f"hand {after.hand_no} {phase_name(after.phase)}")
    out += _card_moves(before, after)
    out += _seat_changes(before, after)
    if after.turn_no != before.turn_no or new_hand:
        line = turn_line(after)
        if line and after.phase in _IN_PLAY:
            out.append(line)
    seen = set(() if new_hand else variant_view_lines(table.variant, before.variant_view))
    out += [x for x in variant_view_lines(table.variant, after.variant_view) if x not in seen]
    old_match = set(match_lines(table, before))
    out += [x for x in match_lines(table, after) if x not in old_match]
    result = result_line(table, after)
    if result and (new_hand or result != result_line(table, before)):
        out.append(result)
    if after.table_state != before.table_state:
        out.append(f"table {state_name(after.table_state)}")
    return out


def hand_over(before: api.PlayerView | None, after: api.PlayerView) -> bool:
    """Whether ``after`` shows a hand's end (its result or abort) that ``before`` showed not (the
    first view, ``before`` None, shows none: a hand that ended before the watch began)."""
    if before is None or after.phase not in _OVER or not after.hand_id:
        return False
    return before.hand_id != after.hand_id or before.phase not in _OVER
