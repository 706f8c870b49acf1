"""Replaying one hand: fold its recorded events through the rules library and check them against
evidence the fold did not produce (``docs/rules/promises.md#disputes``,
``docs/rules/promises.md#replay-is-exact``, ``docs/rules/promises.md#deal-fixed-before-seen``).

Checks, each tied to the event it is about (a :class:`Finding` names the event's stream version,
id and type):

- ``stream``: the hand's events stand in strictly increasing stream versions.
- ``rules``: every recorded event is what ``decide`` gives for the command it records, and the
  events derived by the table (TurnStarted, SeedWindowOpened, SeedsLocked, StockExhausted, drop
  points, HandEnded with every seat's points and the settlement) equal the re-derivation. The fold
  must accept every event (``decide`` raising RuleViolation names the event the rules refuse).
- ``commitment``: the revealed server seed's SHA-256 equals the commitment, and the commitment was
  recorded before HandDealt.
- ``deal``: the deal recomputed with ``rummy_rules.shuffle`` from the revealed seed and the locked
  client seeds equals HandDealt (checked only once the seed is proven by the commitment).
- ``reshuffle``: each StockReshuffled equals the reshuffle sub-stream of the set-aside cards.
- ``ledger-event``: the ledger's HandSettled (re-recorded in the stream) moves what HandEnded says.
- ``settlement-refused``: the ledger refused the hand's settlement (its SettlementRefused,
  re-recorded in the stream): the hand is void, a failure reported with the ledger's reason.
- ``ledger``: the journal rows of the hand in PostgreSQL (see :mod:`rummy_ops.replay.ledger`); an
  ended hand with no settlement in the journal is a failure once it ended more than the grace
  (``settle_grace_s``) ago, a note before.

The mapping between payloads and rules events is :mod:`rummy_game.stream_codec`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import stream_codec as codec
from rummy_game import wires
from rummy_game.table import Table
from rummy_ops.replay.arrangements import equivalent_seats
from rummy_platform.envelope import Envelope
from rummy_platform.skips import SKIPPED
from rummy_rules import commands as cmd
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.errors import RuleViolation
from rummy_rules.rules import RuleSetError
from rummy_rules.settlement import Settlement
from rummy_rules.shuffle import Deal, ShuffleInputs, deal, reshuffle
from rummy_rules.variant import Variant

#: Settlement rows of a hand from the ledger: ``fetch(hand_id) -> LedgerRows | None``.
LedgerFetch = Callable[[str], "LedgerRows | None"]
#: Seconds after HandEnded within which a journal without the hand's settlement is only a note
#: (the ledger consumes table-events asynchronously; it settles within a second or two).
DEFAULT_SETTLE_GRACE_S = 60.0


@dataclass(frozen=True)
class LedgerRows:
    """A hand's settlement in the journal: net amount and points charged per seat (hundredths,
    points) and the house's commission (hundredths)."""

    transaction_id: str
    net_by_seat: dict[int, int]
    points_by_seat: dict[int, int]
    commission_hundredths: int


@dataclass(frozen=True)
class Finding:
    """A place where replay and record differ: the event (stream version, id, payload type), the
    check that failed and what differs."""

    version: int
    event_id: str
    type: str
    check: str
    message: str

    def line(self) -> str:
        return f"v{self.version} {self.type} ({self.event_id}) [{self.check}]: {self.message}"


@dataclass
class HandReplay:
    """The replay of one hand: its events, what failed (``findings``, by stream order), what
    could not be checked (``notes``) and where a recorded arrangement differs from today's
    solver's but is equally good (``equivalent``: accepted, not a mismatch)."""

    table_id: str
    hand_id: str
    envelopes: list[Envelope]
    hand_no: int = 0
    outcome: str = "running"  # ended / voided (settlement refused) / aborted / running
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    #: Why the hand cannot be verified by this build (it pinned a variant or rules version this
    #: build does not know: a newer table service's), or "" when it was replayed.
    unverifiable: str = ""

    @property
    def ok(self) -> bool:
        """No finding, and the hand could be verified at all."""
        return not self.findings and not self.unverifiable

    @property
    def first(self) -> Finding | None:
        """The first event (by stream version) where replay and record differ."""
        return min(self.findings, key=lambda f: f.version) if self.findings else None


def short_type(envelope: Envelope) -> str:
    return envelope.payload.DESCRIPTOR.name


def _finding(envelope: Envelope, check: str, message: str) -> Finding:
    return Finding(envelope.stream_version, envelope.event_id, short_type(envelope), check, message)


# -- commands from recorded events ------------------------------------------------------------


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
            seat=event.seat, amount_cents=event.amount_cents, at_ms=at_ms
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
        with suppress(wires.UnknownWire):
            return wires.lookup(variant).replay_command(event, at_ms)
    return None


_MAX_VALUE = 120  # characters of one value in a mismatch line


def _show(value: object) -> str:
    """A value as a mismatch line shows it: cards in the notation (``7H``, ``JK``), sequences
    bracketed, records by their fields; cut to ``_MAX_VALUE`` characters."""
    return _clip(_text(value))


def _text(value: object) -> str:
    if isinstance(value, Card):
        return value.face
    if isinstance(value, tuple | list):
        if value and all(isinstance(v, Card) for v in value):
            return " ".join(c.face for c in value)
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, Settlement):
            return _settlement_text(value)
        body = " ".join(f"{f.name}={_text(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__name__}({body})"
    if isinstance(value, Enum):
        return value.name.lower()
    return repr(value)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def _first_difference(name: str, a: object, b: object) -> str:
    """``name.path: recorded .., replay ..`` at the first place two values differ (into tuples of
    equal length and records of one type)."""
    if isinstance(a, Settlement) and isinstance(b, Settlement):
        return f"{name}: recorded {_settlement_text(a)}, replay {_settlement_text(b)}"
    if (
        isinstance(a, tuple)
        and isinstance(b, tuple)
        and len(a) == len(b)
        and not all(isinstance(x, Card) for x in (*a, *b))
    ):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(f"{name}[{k}]", x, y)
    if is_dataclass(a) and type(a) is type(b) and not isinstance(a, Card | type):
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x != y:
                return _first_difference(f"{name}.{f.name}", x, y)
    return f"{name}: recorded {_show(a)}, replay {_show(b)}"


def difference(recorded: ev.Event, derived: ev.Event) -> str:
    """What differs between a recorded event and the one the rules derive: for each differing
    field, the first place it differs (``results[1].points: recorded 30, replay 34``), cards in
    the notation and long values cut short."""
    if type(recorded) is not type(derived):
        return f"recorded {type(recorded).__name__}, the rules give {type(derived).__name__}"
    parts = [
        _first_difference(f.name, getattr(recorded, f.name), getattr(derived, f.name))
        for f in fields(recorded)  # type: ignore[arg-type]
        if getattr(recorded, f.name) != getattr(derived, f.name)
    ]
    return "; ".join(parts) or "differs"


def _settlement_text(s: Settlement) -> str:
    body = " ".join(f"s{x.seat}:{x.points}pt/{x.amount_cents}" for x in s.lines)
    return _clip(f"[{body}] commission {s.commission_cents}")


# -- the replay --------------------------------------------------------------------------------


@dataclass
class _Recorded:
    envelope: Envelope
    event: ev.Event


def _pinned_variant(report: HandReplay, started: Envelope) -> Variant[Any] | None:
    """The variant the hand's HandStarted pinned (its rule set's variant and the envelope's
    rules version), or None when this build does not know it: the hand is then *unverifiable*
    (``report.unverifiable`` says why; not OK, and no mismatch either), and an unknown variant
    is counted as a skip (``rummy_platform.skips``)."""
    payload = started.payload
    assert isinstance(payload, table_pb.HandStarted)
    pinned = payload.rule_set.variant if payload.rule_set.HasField("variant") else ""
    try:
        return registry.lookup(pinned, started.rules_version)
    except registry.UnknownVariant as exc:
        report.outcome = "unverifiable"
        report.unverifiable = f"this build cannot verify it: {exc}"
        SKIPPED.lookup_or_skip(  # a skip when the variant itself is unknown (not its rules)
            registry.lookup,
            pinned,
            type_name=started.type,
            table_id=report.table_id,
            hand_id=report.hand_id,
            consumer="replay",
            log=False,  # the replay's report says it (UNVERIFIABLE)
        )
        return None


def replay_hand(
    table_id: str,
    hand_id: str,
    envelopes: Sequence[Envelope],
    ledger: LedgerFetch | None = None,
    *,
    settle_grace_s: float = DEFAULT_SETTLE_GRACE_S,
    now: datetime | None = None,
) -> HandReplay:
    """Replay one hand from its events (stream order) and run every check; never raises for a
    bad record (each problem becomes a Finding). ``settle_grace_s``: seconds after HandEnded
    (by ``now``, default the current time) before a missing journal settlement is a failure."""
    report = HandReplay(table_id, hand_id, list(envelopes))
    for before, after in zip(envelopes, envelopes[1:], strict=False):
        if after.stream_version <= before.stream_version:
            message = f"stream version {after.stream_version} after {before.stream_version}"
            report.findings.append(_finding(after, "stream", message))
            return report
    started = next((e for e in envelopes if isinstance(e.payload, table_pb.HandStarted)), None)
    if started is None:
        first = envelopes[0]
        report.findings.append(_finding(first, "rules", "the hand has no HandStarted before it"))
        return report
    report.hand_no = started.payload.hand_no  # type: ignore[attr-defined]
    variant = _pinned_variant(report, started)
    if variant is None:
        return report
    try:
        ctx = codec.hand_context(started.payload)  # type: ignore[arg-type]
    except RuleSetError as exc:
        message = f"the rules refuse the hand's options: {codec.wire_message(exc)}"
        report.findings.append(_finding(started, "rules", message))
        return report
    report.hand_no = ctx.hand_no
    recorded: list[_Recorded] = []
    for envelope in envelopes:
        payload = envelope.payload
        at_ms = codec.datetime_to_ms(envelope.occurred_at)
        try:
            if isinstance(payload, table_pb.HandStarted):
                recorded.append(_Recorded(envelope, codec.hand_started_from_pb(payload, at_ms)))
            elif codec.is_hand_payload(payload):
                recorded += [
                    _Recorded(envelope, e) for e in codec.from_payload(payload, ctx, at_ms)
                ]
        except (codec.StreamCodecError, ValueError, KeyError) as exc:
            report.findings.append(_finding(envelope, "rules", f"cannot be decoded: {exc}"))
            return report
    state = _rederive(report, ctx, recorded, variant)
    result = variant.result(state)
    if isinstance(result, ev.HandEnded):
        report.outcome = "ended"
    elif isinstance(result, ev.HandAborted):
        report.outcome = "aborted"
    _check_fairness(report, ctx, recorded)
    _check_ledger_event(report, ctx, recorded)
    _check_refusal(report)
    if ledger is None:
        report.notes.append("ledger not checked: no database given")
    else:
        _check_ledger_rows(report, recorded, ledger, settle_grace_s, now or datetime.now(UTC))
    report.findings.sort(key=lambda f: f.version)
    return report


def _rederive(
    report: HandReplay, ctx: codec.HandContext, recorded: list[_Recorded], variant: Variant[Any]
) -> Any:
    """Fold the hand by re-deciding each recorded input as the table does, under the variant the
    hand pinned; stops at the first difference, in an event or in its payload."""
    state = variant.initial_state()
    table = Table(ctx.hand_id, table_pb.TableOpened(), ctx.rule_set, variant)
    i = 0
    while i < len(recorded):
        item = recorded[i]
        at_ms = codec.datetime_to_ms(item.envelope.occurred_at)
        command = command_for(item.event, at_ms, ctx.rule_set.variant)
        if command is None:
            report.findings.append(
                _finding(
                    item.envelope,
                    "rules",
                    f"{type(item.event).__name__} follows from no recorded input here "
                    "(the rules derive no such event at this point)",
                )
            )
            return state
        try:
            derived, payloads = _decide(table, ctx, variant, state, command, at_ms)
        except RuleViolation as exc:
            report.findings.append(_finding(item.envelope, "rules", f"the rules refuse it: {exc}"))
            return state
        if not derived:
            message = "the rules derive no event from it (a stale input)"
            report.findings.append(_finding(item.envelope, "rules", message))
            return state
        for k, (event, payload) in enumerate(zip(derived, payloads, strict=True)):
            if i + k >= len(recorded):
                message = f"the rules give {type(event).__name__} next, the record ends here"
                report.findings.append(_finding(recorded[-1].envelope, "rules", message))
                return state
            got = recorded[i + k]
            equivalent: list[int] = []
            if got.event != event:
                equivalent, problem = _equivalent(state, got.event, event)
                if not equivalent:
                    message = problem or difference(got.event, event)
                    report.findings.append(_finding(got.envelope, "rules", message))
                    return state
                seats = ", ".join(f"s{s}" for s in equivalent)
                report.equivalent.append(
                    f"v{got.envelope.stream_version} HandEnded, {seats} "
                    "(a grouping of equal points other than the one the solver picks today)"
                )
            mine = _comparable(got.envelope.payload, bool(equivalent))
            theirs = _in_recorded_shape(mine, _comparable(payload, bool(equivalent)))
            if type(mine) is type(theirs) and mine != theirs:
                message = f"payload differs from the table's encoding: {_pb_diff(mine, theirs)}"
                report.findings.append(_finding(got.envelope, "rules", message))
                return state
        for event in derived:
            state = variant.apply(state, event)
        i += len(derived)
    report.checked.append("rules")
    return state


def _equivalent(state: Any, got: ev.Event, want: ev.Event) -> tuple[list[int], str]:
    """For a recorded HandEnded that differs from the derived one: the seats whose arrangement is
    an equally good alternative (see :mod:`.arrangements`: for a variant whose hand state has a
    wild rank and whose options have meld options), or ``([], why)``."""
    if not isinstance(got, ev.HandEnded) or not isinstance(want, ev.HandEnded):
        return [], ""
    rule_set = getattr(state, "rule_set", None)
    options = getattr(getattr(rule_set, "options", None), "meld_options", None)
    if options is None or not hasattr(state, "wild_rank"):
        return [], ""
    return equivalent_seats(got, want, state.wild_rank, options)


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


def _in_recorded_shape(recorded: Message, derived: Message) -> Message:
    """``derived`` in the shape of a record written before a field existed: without its rule
    set's per-variant options when ``recorded``'s rule set has none (a hand recorded before
    ``RuleSet.variant_options`` carries only the flat fields, which are still compared: today's
    writer sets both, equal); a SeedsLocked without its variant when the record names none and
    the hand plays the legacy variant (written before ``SeedsLocked.variant``: every such hand
    was Indian points)."""
    if (
        isinstance(recorded, table_pb.SeedsLocked)
        and isinstance(derived, table_pb.SeedsLocked)
        and not recorded.variant
        and derived.variant == registry.LEGACY_VARIANT
    ):
        copy = table_pb.SeedsLocked()
        copy.CopyFrom(derived)
        copy.ClearField("variant")
        return copy
    field = "rule_set"
    if (
        type(recorded) is not type(derived)
        or field not in type(derived).DESCRIPTOR.fields_by_name
        or not recorded.HasField(field)
        or recorded.rule_set.WhichOneof("variant_options") is not None
        or derived.rule_set.WhichOneof("variant_options") is None
    ):
        return derived
    copy = type(derived)()
    copy.CopyFrom(derived)
    copy.rule_set.ClearField("variant_options")
    return copy


def _decide(
    table: Table,
    ctx: codec.HandContext,
    variant: Variant[Any],
    state: Any,
    command: cmd.Command,
    at_ms: int,
) -> tuple[list[ev.Event], list[Message]]:
    """The events ``command`` causes in ``state`` and their payloads, one payload per event, as
    the table service writes them (``Table.hand_commands``: the automatic flag of a timed-out
    seat's draw and discard, deadwood points, accounts, reasons). Raises RuleViolation."""
    if isinstance(command, cmd.StartHand):
        (started,) = variant.decide(state, command)
        assert isinstance(started, ev.HandStarted)
        return [started], [codec.hand_started_to_pb(started, ctx.hand_no)]
    table.hand, table.ctx = state, ctx
    payloads = table.hand_commands([command])
    events = [e for p in payloads for e in codec.from_payload(p, ctx, at_ms)]
    return events, payloads


def _pb_diff(got: Message, want: Message) -> str:
    """The first field where two messages of one type differ: ``name: recorded .., replay ..``
    (cards by face, long values cut short)."""
    if _is_card(got):
        return f"recorded {_pb_text(got)}, replay {_pb_text(want)}"
    for fd in got.DESCRIPTOR.fields:
        a, b = getattr(got, fd.name), getattr(want, fd.name)
        if a == b:
            continue
        if fd.is_repeated and len(a) == len(b):
            k = next(k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
            a, b, name = a[k], b[k], f"{fd.name}[{k}]"
            if isinstance(a, Message) and not _is_card(a):
                return f"{name}.{_pb_diff(a, b)}"
            return f"{name}: recorded {_pb_text(a)}, replay {_pb_text(b)}"
        if isinstance(a, Message) and not fd.is_repeated and not _is_card(a):
            return f"{fd.name}.{_pb_diff(a, b)}"
        return f"{fd.name}: recorded {_pb_text(a)}, replay {_pb_text(b)}"
    return "differs"


def _is_card(value: object) -> bool:
    return isinstance(value, Message) and value.DESCRIPTOR.full_name == "rummy.common.v1.Card"


def _pb_text(value: object) -> str:
    """A protobuf field value in a mismatch line: a card by face, a repeated field item by item,
    a message on one line, bytes in hex; at most 40 characters."""
    if _is_card(value):
        text = value.face or f"#{value.index}"  # type: ignore[attr-defined]
    elif isinstance(value, bytes):
        text = value.hex()
    elif isinstance(value, Message):
        text = text_format.MessageToString(value, as_one_line=True)
    elif isinstance(value, str | int | float | bool):
        text = str(value)
    else:  # a repeated field
        text = "[" + " ".join(_pb_text(v) for v in value) + "]"  # type: ignore[attr-defined]
    return text if len(text) <= 40 else text[:37] + "..."


def _of_type(recorded: list[_Recorded], kind: type) -> list[_Recorded]:
    return [r for r in recorded if isinstance(r.event, kind)]


def _payloads(report: HandReplay, kind: type[Message]) -> list[Envelope]:
    return [e for e in report.envelopes if isinstance(e.payload, kind)]


def _check_fairness(report: HandReplay, ctx: codec.HandContext, recorded: list[_Recorded]) -> None:
    committed = _of_type(recorded, ev.SeedCommitted)
    dealt = _of_type(recorded, ev.HandDealt)
    locked = _of_type(recorded, ev.SeedsLocked)
    revealed = _payloads(report, fairness_pb.SeedRevealed)
    if dealt and (
        not committed or committed[0].envelope.stream_version > dealt[0].envelope.stream_version
    ):
        report.findings.append(
            _finding(
                dealt[0].envelope, "commitment", "dealt before any seed commitment was recorded"
            )
        )
        return
    if not committed:
        return
    if not revealed:
        report.notes.append("seed not revealed yet: commitment and deal not checked")
        return
    reveal = revealed[0]
    seed = bytes(reveal.payload.server_seed)  # type: ignore[attr-defined]
    commitment = committed[0].event.commitment  # type: ignore[attr-defined]
    if hashlib.sha256(seed).hexdigest() != commitment:
        report.findings.append(
            _finding(
                reveal,
                "commitment",
                f"SHA-256 of the revealed seed is {hashlib.sha256(seed).hexdigest()[:16]}..., "
                f"the commitment recorded at v{committed[0].envelope.stream_version} is "
                f"{commitment[:16]}... (deal not recomputed from an unproven seed)",
            )
        )
        return
    report.checked.append("commitment")
    if not dealt or not locked:
        return
    seeds = {s.seat: bytes.fromhex(s.seed_hex) for s in locked[0].event.client_seeds}  # type: ignore[attr-defined]
    try:
        inputs = ShuffleInputs.of(seed, ctx.hand_id, seeds)
        layout = ctx.rule_set.layout
        expected = deal(inputs, ctx.shoe, seeds, ctx.dealer_seat, layout.hand_size, layout.shape)
    except ValueError as exc:
        report.findings.append(_finding(dealt[0].envelope, "deal", f"cannot be recomputed: {exc}"))
        return
    got: ev.HandDealt = dealt[0].event  # type: ignore[assignment]
    problem = _deal_difference(got, expected)
    if problem:
        report.findings.append(_finding(dealt[0].envelope, "deal", problem))
        return
    report.checked.append("deal")
    set_aside = {r.event.reshuffle_no: r.event.cards for r in _of_type(recorded, ev.StockExhausted)}  # type: ignore[attr-defined]
    for item in _of_type(recorded, ev.StockReshuffled):
        number = item.event.reshuffle_no  # type: ignore[attr-defined]
        cards = set_aside.get(number, ())
        try:
            want = reshuffle(inputs, ctx.shoe, cards, number)
        except ValueError as exc:
            report.findings.append(
                _finding(item.envelope, "reshuffle", f"cannot be recomputed: {exc}")
            )
            return
        if want != item.event.stock:  # type: ignore[attr-defined]
            k = next(
                (k for k, (a, b) in enumerate(zip(item.event.stock, want, strict=False)) if a != b),  # type: ignore[attr-defined]
                min(len(want), len(item.event.stock)),  # type: ignore[attr-defined]
            )
            report.findings.append(
                _finding(
                    item.envelope,
                    "reshuffle",
                    f"reshuffle {number} stock[{k}] differs from the reshuffle/{number} sub-stream",
                )
            )
            return


def _deal_difference(got: ev.HandDealt, expected: Deal) -> str:
    want_hands = {h.seat: h.cards for h in expected.hands}
    for hand in got.hands:
        want = want_hands.get(hand.seat)
        if want is None:
            return f"seat {hand.seat} is dealt a hand the recomputed deal does not give"
        if hand.cards != want:
            k = next(
                (k for k, (a, b) in enumerate(zip(hand.cards, want, strict=False)) if a != b),
                min(len(hand.cards), len(want)),
            )
            a = hand.cards[k].face if k < len(hand.cards) else "-"
            b = want[k].face if k < len(want) else "-"
            return f"seat {hand.seat} card {k + 1}: recorded {a}, recomputed {b}"
    if got.wild_cut != expected.wild_cut:
        return f"wild cut: recorded {_show(got.wild_cut)}, recomputed {_show(expected.wild_cut)}"
    if got.first_open != expected.first_open:
        recomputed = _show(expected.first_open)
        return f"first open card: recorded {_show(got.first_open)}, recomputed {recomputed}"
    if got.stock != expected.stock:
        return "the stock order differs from the recomputed deal"
    return ""


def _ended(recorded: list[_Recorded]) -> _Recorded | None:
    ended = _of_type(recorded, ev.HandEnded)
    return ended[0] if ended else None


def _check_ledger_event(
    report: HandReplay, ctx: codec.HandContext, recorded: list[_Recorded]
) -> None:
    """The ledger's HandSettled, re-recorded by the table, against HandEnded (net per account)."""
    ended = _ended(recorded)
    for settled in _payloads(report, ledger_pb.HandSettled):
        if ended is None:
            report.findings.append(
                _finding(settled, "ledger-event", "settled a hand that did not end")
            )
            return
        s = ended.event.settlement  # type: ignore[attr-defined]
        want: dict[str, int] = {}
        for line in s.lines:
            account = ctx.accounts.get(line.seat, f"seat {line.seat}")
            want[account] = want.get(account, 0) + line.amount_cents
        got: dict[str, int] = {}
        for line in settled.payload.lines:  # type: ignore[attr-defined]
            got[line.account_id] = got.get(line.account_id, 0) + line.amount_hundredths
        for account, amount in sorted(want.items()):
            if got.get(account, 0) != amount:
                report.findings.append(
                    _finding(
                        settled,
                        "ledger-event",
                        f"{account} moved {got.get(account, 0)} in the ledger's HandSettled, "
                        f"HandEnded says {amount}",
                    )
                )
                return
        commission = settled.payload.commission_hundredths  # type: ignore[attr-defined]
        if commission != s.commission_cents:
            report.findings.append(
                _finding(
                    settled,
                    "ledger-event",
                    f"commission {commission} in HandSettled, HandEnded says {s.commission_cents}",
                )
            )
            return
        report.checked.append("ledger-event")


def _check_refusal(report: HandReplay) -> None:
    """A SettlementRefused the table recorded: the ledger refused the hand's settlement, so the
    hand is void (its holds released, nothing moved). Reported as a failure with the reason."""
    for refused in _payloads(report, ledger_pb.SettlementRefused):
        report.outcome = "voided"
        reason = refused.payload.reason  # type: ignore[attr-defined]
        message = "the ledger refused the settlement (the hand is void, its holds released): "
        report.findings.append(_finding(refused, "settlement-refused", message + _clip(reason)))


def _journal_difference(rows: LedgerRows, s: Settlement) -> str:
    """What the journal rows of a hand say differently from its settlement ("" if nothing)."""
    tx = f"journal {rows.transaction_id}"
    for line in s.lines:
        net = rows.net_by_seat.get(line.seat, 0)
        if net != line.amount_cents:
            return f"{tx}: seat {line.seat} moved {net}, the log says {line.amount_cents}"
        charged = rows.points_by_seat.get(line.seat, 0)
        if line.seat not in s.winner_seats and charged != line.points:
            return f"{tx}: seat {line.seat} charged {charged} points, the log says {line.points}"
    extra = set(rows.net_by_seat) - {line.seat for line in s.lines}
    if extra:
        return f"{tx} moves seats {sorted(extra)} that the log does not settle"
    if rows.commission_hundredths != s.commission_cents:
        return f"{tx}: commission {rows.commission_hundredths}, the log says {s.commission_cents}"
    return ""


def _check_ledger_rows(
    report: HandReplay,
    recorded: list[_Recorded],
    ledger: LedgerFetch,
    grace_s: float,
    now: datetime,
) -> None:
    ended = _ended(recorded)
    rows = ledger(report.hand_id)
    refused = _payloads(report, ledger_pb.SettlementRefused)
    if ended is None or refused:
        if rows is not None:
            why = "the ledger refused its settlement" if refused else "the hand did not end"
            message = f"the journal settles it ({rows.transaction_id}) but {why}"
            report.findings.append(_finding(report.envelopes[-1], "ledger", message))
        return
    if rows is None:
        waited = (now - ended.envelope.occurred_at).total_seconds()
        if waited > grace_s:
            message = (
                f"the hand ended {waited:.0f} s ago and the journal has no settlement for it "
                f"(grace {grace_s:g} s)"
            )
            report.findings.append(_finding(ended.envelope, "ledger", message))
        else:
            report.notes.append(
                f"ledger: no settlement in the journal yet (the hand ended {waited:.0f} s ago; "
                f"a failure after {grace_s:g} s)"
            )
        return
    settled = _payloads(report, ledger_pb.HandSettled)
    anchor = settled[0] if settled else ended.envelope
    assert isinstance(ended.event, ev.HandEnded)
    problem = _journal_difference(rows, ended.event.settlement)
    if problem:
        report.findings.append(_finding(anchor, "ledger", problem))
    else:
        report.checked.append("ledger")
