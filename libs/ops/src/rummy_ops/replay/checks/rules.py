"""The ``rules`` check: re-decide each recorded input as the table does (the step the table
service shares: :func:`rummy_game.hand_payloads.hand_payloads`) and compare every derived
event and its payload with the record."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import stream_payloads, upcast, variant_wires
from rummy_game.bundle import bundle_of
from rummy_game.hand_payloads import hand_payloads
from rummy_ops.replay.checks.mismatch import difference, pb_diff
from rummy_ops.replay.checks.record import (
    HandReplay,
    Recorded,
    finding,
)
from rummy_rules import commands as cmd
from rummy_rules import events as ev
from rummy_rules.errors import RuleViolation
from rummy_rules.variant import Variant


def command_for(event: ev.Event, at_ms: int, variant: str = "") -> cmd.Command | None:
    """The command a recorded event answers (its input), or None for an event the rules derive
    from another (TurnStarted, SeedWindowOpened, StockExhausted, HandEnded, a timeout drop).
    A variant's own events (``variant``: the hand's) are its wire's (``replay_command``)."""
    if isinstance(event, ev.HandStarted):
        return cmd.StartHand(
            hand_id=event.hand_id,
            seats=event.seats,
            dealer_seat=event.dealer_seat,
            rule_set=event.rule_set,
            at_ms=at_ms,
        )
    if isinstance(event, ev.StakeReserved):
        return cmd.RecordStakeReserved(
            seat=event.seat, amount_hundredths=event.amount_hundredths, at_ms=at_ms
        )
    if isinstance(event, ev.SeedCommitted):
        return cmd.RecordSeedCommitment(commitment=event.commitment, at_ms=at_ms)
    if isinstance(event, ev.ClientSeedContributed):
        return cmd.ContributeClientSeed(seat=event.seat, seed_hex=event.seed_hex, at_ms=at_ms)
    if isinstance(event, ev.SeedsLocked):  # locked without every seed: the window's timeout
        return cmd.TurnTimeout(turn_no=0, at_ms=at_ms)
    if isinstance(event, ev.HandDealt):
        return cmd.Deal(
            hands=event.hands,
            wild_cut=event.wild_cut,
            first_open=event.first_open,
            stock=event.stock,
            at_ms=at_ms,
        )
    if isinstance(event, ev.CardDrawn):
        draw = cmd.DrawFromStock if event.source is ev.DrawSource.STOCK else cmd.DrawFromDiscardPile
        return draw(seat=event.seat, turn_no=event.turn_no, at_ms=at_ms)
    if isinstance(event, ev.CardDiscarded):
        return cmd.Discard(seat=event.seat, turn_no=event.turn_no, card=event.card, at_ms=at_ms)
    if isinstance(event, ev.TurnTimedOut):
        return cmd.TurnTimeout(turn_no=event.turn_no, at_ms=at_ms)
    if isinstance(event, ev.StockReshuffled):
        return cmd.RecordStockReshuffled(
            reshuffle_no=event.reshuffle_no, stock=event.stock, at_ms=at_ms
        )
    if isinstance(event, ev.HandAborted):
        return cmd.AbortHand(reason=event.reason, at_ms=at_ms)
    if variant:
        with suppress(variant_wires.UnknownWire):
            return variant_wires.lookup(variant).replay_command(event, at_ms)
    return None


def rederive(
    report: HandReplay,
    ctx: stream_payloads.HandContext,
    recorded: list[Recorded],
    variant: Variant[Any],
) -> Any:
    """Fold the hand by re-deciding each recorded input as the table does, under the variant the
    hand pinned; stops at the first difference, in an event or in its payload."""
    state = variant.initial_state()
    i = 0
    while i < len(recorded):
        item = recorded[i]
        at_ms = stream_payloads.datetime_to_ms(item.envelope.occurred_at)
        command = command_for(item.event, at_ms, ctx.rule_set.variant)
        if command is None:
            report.findings.append(
                finding(
                    item.envelope,
                    "rules",
                    f"{type(item.event).__name__} follows from no recorded input here "
                    "(the rules derive no such event at this point)",
                )
            )
            return state
        try:
            derived, payloads = _decide(ctx, variant, state, command, at_ms)
        except RuleViolation as exc:
            report.findings.append(finding(item.envelope, "rules", f"the rules refuse it: {exc}"))
            return state
        if not derived:
            message = "the rules derive no event from it (a stale input)"
            report.findings.append(finding(item.envelope, "rules", message))
            return state
        for k, (event, payload) in enumerate(zip(derived, payloads, strict=True)):
            if i + k >= len(recorded):
                message = f"the rules give {type(event).__name__} next, the record ends here"
                report.findings.append(finding(recorded[-1].envelope, "rules", message))
                return state
            got = recorded[i + k]
            equivalent: list[int] = []
            if got.event != event:
                equivalent, problem = _equivalent(variant, state, got.event, event)
                if not equivalent:
                    message = problem or difference(got.event, event)
                    report.findings.append(finding(got.envelope, "rules", message))
                    return state
                seats = ", ".join(f"s{s}" for s in equivalent)
                report.equivalent.append(
                    f"v{got.envelope.stream_version} HandEnded, {seats} "
                    "(a grouping of equal points other than the one the solver picks today)"
                )
            mine = _comparable(_recorded(got, ctx, variant, state), bool(equivalent))
            theirs = _comparable(payload, bool(equivalent))
            if type(mine) is type(theirs) and mine != theirs:
                message = f"payload differs from the table's encoding: {pb_diff(mine, theirs)}"
                report.findings.append(finding(got.envelope, "rules", message))
                return state
        for event in derived:
            state = variant.apply(state, event)
        i += len(derived)
    report.checked.append("rules")
    return state


def _recorded(
    got: Recorded, ctx: stream_payloads.HandContext, variant: Variant[Any], state: Any
) -> Message:
    """``got``'s payload in the current shape (``rummy_game.upcast.hand_payload``; a HandEnded's
    under the hand's cut card, from ``state``, the hand before it)."""
    recorded = got.envelope.payload
    cut = variant.view(state, -1).wild_cut if isinstance(recorded, table_pb.HandEnded) else None
    return upcast.hand_payload(recorded, ctx, cut)


def _equivalent(
    variant: Variant[Any], state: Any, got: ev.Event, want: ev.Event
) -> tuple[list[int], str]:
    """For a recorded HandEnded that differs from the derived one: the seats whose arrangement is
    an equally good alternative, as the variant's bundle judges it
    (``VariantBundle.equivalent_results``, from the hand's state), or ``([], why)``; a variant
    with no such judge accepts no difference."""
    if not isinstance(got, ev.HandEnded) or not isinstance(want, ev.HandEnded):
        return [], ""
    bundle = bundle_of(variant.name)
    if bundle is None or bundle.equivalent_results is None:
        return [], ""
    return bundle.equivalent_results(state, got, want)


def _comparable(payload: Message, ignore_groupings: bool) -> Message:
    """``payload`` as compared with the table's encoding: with ``ignore_groupings`` (once the
    arrangements were judged equivalent) a HandEnded without its melds and deadwood cards (its
    deadwood points still count)."""
    if not ignore_groupings or not isinstance(payload, table_pb.HandEnded):
        return payload
    copy = table_pb.HandEnded()
    copy.CopyFrom(payload)
    for result in copy.results:
        del result.arrangement.melds[:]
        del result.arrangement.deadwood[:]
    return copy


def _decide(
    ctx: stream_payloads.HandContext,
    variant: Variant[Any],
    state: Any,
    command: cmd.Command,
    at_ms: int,
) -> tuple[list[ev.Event], list[Message]]:
    """The events ``command`` causes in ``state`` and their payloads, one payload per event, as
    the table service writes them (:func:`~rummy_game.hand_payloads.hand_payloads`: the
    automatic flag of a timed-out seat's draw and discard, deadwood points, accounts, reasons).
    Raises RuleViolation."""
    if isinstance(command, cmd.StartHand):
        (started,) = variant.decide(state, command)
        assert isinstance(started, ev.HandStarted)
        return [started], [stream_payloads.hand_started_to_pb(started, ctx.hand_no)]
    payloads = [p for p, _ in hand_payloads(variant, state, ctx, [command])]
    events = [e for p in payloads for e in stream_payloads.from_payload(p, ctx, at_ms)]
    return events, payloads
