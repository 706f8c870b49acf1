"""How a replay is shown: a timeline for people (one line per event, cards included: ops see
everything; money in House Tokens, ``13.00``, and a commission as a percent, through
:mod:`rummy_ops.money`) and a JSON document for machines (money in integer hundredths)."""

from __future__ import annotations

import io
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as table_pb
from rummy_ops.money import commission_text, money_field, tokens
from rummy_ops.replay.checks import HandReplay, short_type
from rummy_ops.replay.checks.match import MatchReplay
from rummy_platform.envelope import Envelope
from rummy_rules.formats.money import MatchSettlement


def _faces(cards: Any) -> str:
    return " ".join(c.face for c in cards)


def _clock(deadline: Any) -> str:
    return str(deadline.ToDatetime().strftime("%H:%M:%S.%f")[:-3])


def _seat(payload: Message) -> str:
    if "seat" in payload.DESCRIPTOR.fields_by_name:
        return f"s{payload.seat}"  # type: ignore[attr-defined]
    return ""


def winners(ended: table_pb.HandEnded) -> str:
    """``"winner s2"``, or for a pot several winners share ``"winners s2+s0"`` (the variant's
    order: the first is ``winner_seat``)."""
    if not ended.co_winner_seats:
        return f"winner s{ended.winner_seat}"
    return "winners " + "+".join(f"s{s}" for s in (ended.winner_seat, *ended.co_winner_seats))


def describe(payload: Message) -> str:  # noqa: C901 - one branch per event type
    """A short description of a table-stream payload, with its cards by face."""
    name = payload.DESCRIPTOR.name
    p: Any = payload
    if name == "HandStarted":
        seats = " ".join(f"s{s.seat}={s.account_id}" for s in p.seats)
        return (
            f"hand {p.hand_no} dealer s{p.dealer_seat} point value "
            f"{tokens(p.point_value_hundredths)} commission {commission_text(p.commission_bps)} "
            f"[{seats}]"
        )
    if name == "StakesReserved":
        return " ".join(f"s{r.seat} {tokens(r.amount_hundredths)}" for r in p.reservations)
    if name in ("SeedCommitted", "SeedsLocked"):
        field = p.commitment_sha256 if name == "SeedCommitted" else p.server_commitment_sha256
        extra = f" {len(p.client_seeds)} client seeds" if name == "SeedsLocked" else ""
        return f"commitment {bytes(field).hex()[:16]}...{extra}"
    if name == "SeedRevealed":
        return f"server seed {bytes(p.server_seed).hex()[:16]}..."
    if name == "ClientSeedContributed":
        return f"client seed {bytes(p.client_seed).hex()[:16] or '(empty)'}"
    if name == "HandDealt":
        hands = " | ".join(f"s{h.seat}: {_faces(h.cards)}" for h in p.hands)
        return f"cut {p.wild_cut.face} open {p.first_open.face} stock {len(p.stock)} | {hands}"
    if name == "TurnStarted":
        return f"turn {p.turn_no} until {_clock(p.deadline)}"
    if name == "SeedWindowOpened":
        return f"client seeds until {_clock(p.deadline)}"
    if name == "StakeRejected":
        return (
            f"s{p.seat} {p.account_id} has {tokens(p.available_hundredths)} of "
            f"{tokens(p.required_hundredths)}"
        )
    if name == "CardDrawn":
        source = "pile" if p.source == 2 else "stock"
        return (
            f"turn {p.turn_no} draws {p.card.face} from {source}{' (auto)' if p.automatic else ''}"
        )
    if name == "CardDiscarded":
        return f"turn {p.turn_no} discards {p.card.face}{' (auto)' if p.automatic else ''}"
    if name == "TurnTimedOut":
        return f"turn {p.turn_no} timed out ({p.misses_in_a_row} in a row)"
    if name == "Declared":
        return f"turn {p.turn_no} face down {p.face_down.face}, shows {_faces(p.shown)}"
    if name == "DeclarationRejected":
        return f"turn {p.turn_no} wrong declare ({p.points} points): {_faces(p.shown)}"
    if name == "PlayerDropped":
        kind = table_pb.DropKind.Name(p.kind).removeprefix("DROP_KIND_").lower()
        return f"turn {p.turn_no} drops ({kind}, {p.points} points)"
    if name == "StockExhausted":
        return f"{len(p.cards)} cards set aside for reshuffle {p.reshuffle_no}"
    if name == "StockReshuffled":
        return f"reshuffle {p.reshuffle_no}: new stock of {len(p.stock)}"
    if name == "HandEnded":
        points = " ".join(f"s{r.seat}:{r.points} {r.outcome}" for r in p.results)
        money = " ".join(f"s{x.seat}:{tokens(x.amount_hundredths, True)}" for x in p.settlement)
        return f"{winners(p)} [{points}] [{money}] commission {tokens(p.commission_hundredths)}"
    if name == "HandSettled":
        return f"{p.journal_transaction_id}: " + " ".join(
            f"{x.account_id}:{tokens(x.amount_hundredths, True)}" for x in p.lines
        )
    if name == "HandAborted":
        return str(p.reason)
    return money_in_tokens(payload)[:160]


def money_in_tokens(message: Message) -> str:
    """A message's one-line text with its money as a person reads it: ``stake_hundredths: 1300``
    -> ``stake: 13.00`` (House Tokens), ``commission_bps: 500`` -> ``commission: 5.00%``, at any
    depth (which fields are money, and how they read: :func:`rummy_ops.money.money_field`)."""
    return text_format.MessageToString(message, as_one_line=True, message_formatter=_money_fields)


def _money_fields(message: Message, indent: int, as_one_line: bool) -> str | None:
    """``text_format``'s hook for one (sub)message: its fields, the money ones through
    :func:`~rummy_ops.money.money_field`; None (text_format's own form) for an empty message and
    for an ``Any``, whose packed message comes back here."""
    if message.DESCRIPTOR.full_name == "google.protobuf.Any":
        return None
    out = io.StringIO()
    for field, value in message.ListFields():
        for item in value if field.is_repeated else [value]:
            name, shown = money_field(field.name, item)
            if name != field.name:
                out.write(f"{name}: {shown} ")
            else:
                text_format.PrintField(
                    field, item, out, as_one_line=True, message_formatter=_money_fields
                )
    return out.getvalue().rstrip() or None


def timeline_line(envelope: Envelope) -> str:
    """``version  time  type  seat  description`` for one event."""
    at = envelope.occurred_at.strftime("%H:%M:%S.%f")[:-3]
    return (
        f"{envelope.stream_version:>6}  {at}  {short_type(envelope):<22} "
        f"{_seat(envelope.payload):<3} {describe(envelope.payload)}"
    )


def hand_lines(hand: HandReplay, timeline: bool = True) -> list[str]:
    """The timeline of a replayed hand and its verdict."""
    head = f"table {hand.table_id} hand {hand.hand_no} ({hand.hand_id}): {hand.outcome}"
    lines = [head]
    if timeline:
        bad = {f.version for f in hand.findings}
        lines += [
            ("!" if e.stream_version in bad else " ") + timeline_line(e) for e in hand.envelopes
        ]
    for note in hand.notes:
        lines.append(f"  note: {note}")
    for same in hand.equivalent:
        lines.append(f"  equivalent arrangement: {same}")
    first = hand.first
    if hand.unverifiable:
        lines.append(f"  UNVERIFIABLE: {hand.unverifiable}")
    elif first is None:
        lines.append(f"  OK ({', '.join(hand.checked)} checked)")
    else:
        verdict = "REFUSED" if first.check == "settlement-refused" else "MISMATCH"
        lines.append(f"  {verdict} at {first.line()}")
        lines += [f"    also: {f.line()}" for f in hand.findings if f is not first]
    return lines


def hand_json(hand: HandReplay) -> dict[str, Any]:
    first = hand.first
    return {
        "table_id": hand.table_id,
        "hand_id": hand.hand_id,
        "hand_no": hand.hand_no,
        "outcome": hand.outcome,
        "ok": hand.ok,
        "unverifiable": hand.unverifiable or None,
        "events": len(hand.envelopes),
        "checked": hand.checked,
        "notes": hand.notes,
        "equivalent_arrangements": hand.equivalent,
        "first_mismatch": None if first is None else _finding_json(first),
        "findings": [_finding_json(f) for f in hand.findings],
    }


def _settlement_json(s: MatchSettlement | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "pool_hundredths": s.pool_hundredths,
        "commission_hundredths": s.commission_hundredths,
        "lines": [
            {
                "seat": x.seat,
                "held_hundredths": x.held_hundredths,
                "amount_hundredths": x.amount_hundredths,
            }
            for x in s.lines
        ],
    }


def match_json(match: MatchReplay) -> dict[str, Any]:
    """A match's replay as JSON: its format, deals (number, hand id), outcome, winners, each
    game's end (game to N, Hollywood: winner, totals in points after the game-end scoring, its
    settlement) and the match's settlement it re-derived (hundredths), its checks, notes and
    findings."""
    first = match.first
    return {
        "table_id": match.table_id,
        "match_id": match.match_id,
        "match_format": match.match_format,
        "outcome": match.outcome,
        "ok": match.ok,
        "deals": [{"deal_no": n, "hand_id": h} for n, h in match.deals],
        "winners": list(match.winners),
        "games": [
            {
                "game_no": g.game_no,
                "winner": g.winner,
                "totals": [{"seat": seat, "points": points} for seat, points in g.totals],
                "settlement": _settlement_json(g.settlement),
            }
            for g in match.games
        ],
        "settlement": _settlement_json(match.settlement),
        "checked": match.checked,
        "notes": match.notes,
        "first_mismatch": None if first is None else _finding_json(first),
        "findings": [_finding_json(f) for f in match.findings],
    }


def _finding_json(f: Any) -> dict[str, Any]:
    return {
        "stream_version": f.version,
        "event_id": f.event_id,
        "type": f.type,
        "check": f.check,
        "message": f.message,
    }
