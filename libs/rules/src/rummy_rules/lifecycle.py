"""The life of one hand around its play, the same for every variant (``docs/rules/hand-flow.md``).

``HandStarted`` (the seats, the dealer, the rule set), the ledger's ``StakeReserved`` for each
seat and the fairness service's ``SeedCommitted`` (both recorded: ``SeedWindowOpened``), the
client seeds until all are in or the window closes (``SeedsLocked``), the dealer's ``HandDealt``,
then turns (``TurnStarted`` with the clock's deadline) until ``HandEnded``; ``HandAborted`` at any
point before the end. A variant keeps the state and plays the hand; what this module decides and
checks it takes from the state through :class:`HandLife`, and the events it returns are folded
with the variant's own ``apply``. Pure; names no variant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar

from .commands import (
    AbortHand,
    Command,
    ContributeClientSeed,
    Deal,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
    TurnTimeout,
)
from .errors import ErrorCode, RuleViolation
from .events import (
    ClientSeedContributed,
    Event,
    HandAborted,
    HandEnded,
    HandStarted,
    SeatAccount,
    SeatSeed,
    SeedCommitted,
    SeedsLocked,
    SeedWindowOpened,
    StakeReserved,
    TurnStarted,
)
from .rules import DealShape, RuleSet, RuleSetError
from .shuffle import MAX_CLIENT_SEED_BYTES
from .variant import Deadline, VariantRules, clock_deadline, fold_with
from .view import PlayerView

MS_PER_SECOND = 1000


class HandPhase(Enum):
    """Where a hand is in its life (``docs/rules/hand-flow.md#phases``)."""

    NOT_STARTED = "not_started"
    PREPARING = "preparing"  # waiting for the stakes and the seed commitment
    SEED_WINDOW = "seed_window"
    AWAITING_DEAL = "awaiting_deal"
    PLAYING = "playing"
    ENDED = "ended"
    ABORTED = "aborted"


BEFORE_THE_DEAL = (HandPhase.PREPARING, HandPhase.SEED_WINDOW, HandPhase.AWAITING_DEAL)
"""The phases of a started hand not yet dealt: a seat that leaves then aborts the hand."""


class HandLife(Protocol):
    """What the lifecycle reads of a variant's hand state (a frozen dataclass)."""

    @property
    def phase(self) -> HandPhase: ...

    @property
    def rule_set(self) -> RuleSet | None: ...

    @property
    def commitment(self) -> str | None: ...

    @property
    def seed_deadline_ms(self) -> int | None: ...

    @property
    def turn_deadline_ms(self) -> int | None: ...

    @property
    def result(self) -> HandEnded | HandAborted | None: ...

    def seat_numbers(self) -> tuple[int, ...]:
        """The seats dealt in, ascending."""
        ...

    def stake_recorded(self, seat: int) -> bool:
        """Whether ``seat``'s StakeReserved is recorded."""
        ...

    def client_seed(self, seat: int) -> str | None:
        """``seat``'s client seed as hex; None until it sent one (``""``: none by the lock)."""
        ...


S = TypeVar("S", bound=HandLife)
Apply = Callable[[S, Event], S]


@dataclass(frozen=True)
class SeatedHand:
    """The hand's life as a variant's state holds it (its base class: gin's, Rummy 500's): the
    seats (ascending) and their accounts, the seats whose stake is recorded (``staked``), the seed
    commitment and window (``seed_deadline_ms``), the client seeds (``seeds``), the clock's
    deadline of the turn on (``turn_deadline_ms``) and the closing event. A subclass adds its
    play (a field with a default); :func:`apply_seated` folds every event of the life into it."""

    phase: HandPhase = HandPhase.NOT_STARTED
    hand_id: str = ""
    rule_set: RuleSet | None = None
    dealer_seat: int = -1
    seats: tuple[SeatAccount, ...] = ()
    staked: tuple[int, ...] = ()
    commitment: str | None = None
    seed_deadline_ms: int | None = None
    seeds: tuple[SeatSeed, ...] = ()
    turn_deadline_ms: int | None = None
    result: HandEnded | HandAborted | None = None

    def account(self, seat: int) -> SeatAccount | None:
        return next((s for s in self.seats if s.seat == seat), None)

    def seat_numbers(self) -> tuple[int, ...]:
        """The seats dealt in, ascending."""
        return tuple(s.seat for s in self.seats)

    def stake_recorded(self, seat: int) -> bool:
        return seat in self.staked

    def client_seed(self, seat: int) -> str | None:
        return next((s.seed_hex for s in self.seeds if s.seat == seat), None)


H = TypeVar("H", bound=SeatedHand)


def apply_seated(state: H, event: Event) -> H | None:
    """The state after an event of the hand's life (HandStarted: a fresh state of ``state``'s
    class; the stakes, the commitment, the seed window, the client seeds, the lock, a turn's
    deadline, the end); None for any other event (the variant's play folds it)."""
    if isinstance(event, HandStarted):
        return replace(
            type(state)(),
            phase=HandPhase.PREPARING,
            hand_id=event.hand_id,
            rule_set=event.rule_set,
            dealer_seat=event.dealer_seat,
            seats=tuple(sorted(event.seats, key=lambda s: s.seat)),
        )
    lived = apply_lifecycle(state, event)
    if lived is not None:
        return lived
    if isinstance(event, StakeReserved):
        return replace(state, staked=(*state.staked, event.seat))
    if isinstance(event, ClientSeedContributed):
        return replace(state, seeds=(*state.seeds, SeatSeed(event.seat, event.seed_hex)))
    if isinstance(event, SeedsLocked):
        return replace(
            state, phase=HandPhase.AWAITING_DEAL, seed_deadline_ms=None, seeds=event.client_seeds
        )
    if isinstance(event, TurnStarted):
        return replace(state, turn_deadline_ms=event.deadline_ms)
    return None


def decide_before_play(
    state: S, command: Command, check_rule_set: Callable[[RuleSet], None], apply: Apply[S]
) -> tuple[Event, ...] | None:
    """The events of a command of the hand's life that every variant decides alike (start, a
    stake, the commitment, a client seed, an abort); None for any other command (a deal, a
    leave, play: the variant's). ``check_rule_set`` raises RuleSetError (or RuleViolation) for a
    rule set the variant does not play. Raises RuleViolation."""
    if isinstance(command, StartHand):

        def check(rule_set: RuleSet) -> None:
            try:
                check_rule_set(rule_set)
            except RuleSetError as exc:
                raise fail(ErrorCode.INVALID_COMMAND, str(exc)) from None

        return (start_hand(state, command, check),)
    if isinstance(command, RecordStakeReserved):
        return tuple(record_stake(state, command, apply))
    if isinstance(command, RecordSeedCommitment):
        return tuple(record_commitment(state, command, apply))
    if isinstance(command, ContributeClientSeed):
        return tuple(contribute_seed(state, command, apply))
    if isinstance(command, AbortHand):
        return tuple(abort(state, command))
    return None


def fail(code: ErrorCode, message: str) -> RuleViolation:
    """The refusal of a command (raise it)."""
    return RuleViolation(code, message)


def require_phase(state: HandLife, *phases: HandPhase) -> None:
    """Raise RuleViolation(WRONG_PHASE) unless the hand is in one of ``phases``."""
    if state.phase not in phases:
        wanted = " or ".join(p.value for p in phases)
        raise fail(
            ErrorCode.WRONG_PHASE, f"the hand is {state.phase.value}; this needs it {wanted}"
        )


def require_seated(state: HandLife, seat: int) -> None:
    """Raise RuleViolation(NOT_IN_HAND) unless ``seat`` is dealt into the hand."""
    if seat not in state.seat_numbers():
        raise fail(ErrorCode.NOT_IN_HAND, f"seat {seat} is not dealt into this hand")


def is_hex(text: str) -> bool:
    """Whether ``text`` is an even number of hex digits (``""`` is)."""
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def _fold(state: S, events: Sequence[Event], apply: Apply[S]) -> S:
    for event in events:
        state = apply(state, event)
    return state


# --- before the deal ----------------------------------------------------------------------------


def start_hand(
    state: HandLife, c: StartHand, check_rule_set: Callable[[RuleSet], None]
) -> HandStarted:
    """The HandStarted of ``c``: a hand not started yet, a rule set ``check_rule_set`` accepts
    (it raises RuleViolation otherwise), an id, ``min_players``..``seats`` seats of distinct seat
    numbers (0..``seats`` - 1) and accounts, the dealer among them. Raises RuleViolation
    (WRONG_PHASE, INVALID_COMMAND)."""
    require_phase(state, HandPhase.NOT_STARTED)
    rules = c.rule_set
    check_rule_set(rules)
    if not c.hand_id:
        raise fail(ErrorCode.INVALID_COMMAND, "a hand needs an id")
    seats = [s.seat for s in c.seats]
    accounts = [s.account_id for s in c.seats]
    if len(set(seats)) != len(seats) or len(set(accounts)) != len(accounts):
        raise fail(ErrorCode.INVALID_COMMAND, "a seat or an account is listed twice")
    if not rules.min_players <= len(seats) <= rules.seats:
        raise fail(
            ErrorCode.INVALID_COMMAND,
            f"a hand needs {rules.min_players}..{rules.seats} seats, got {len(seats)}",
        )
    if any(not 0 <= s < rules.seats for s in seats):
        raise fail(ErrorCode.INVALID_COMMAND, f"seats are numbered 0..{rules.seats - 1}")
    if c.dealer_seat not in seats:
        raise fail(ErrorCode.INVALID_COMMAND, f"the dealer (seat {c.dealer_seat}) is not seated")
    return HandStarted(
        hand_id=c.hand_id,
        seats=tuple(sorted(c.seats, key=lambda s: s.seat)),
        dealer_seat=c.dealer_seat,
        rule_set=rules,
        at_ms=c.at_ms,
    )


def _window_if_ready(state: S, events: list[Event], at_ms: int, apply: Apply[S]) -> list[Event]:
    """``events``, and the SeedWindowOpened once they leave the commitment and every stake
    recorded (the window lasts the rule set's ``seed_window_seconds``)."""
    after = _fold(state, events, apply)
    ready = all(after.stake_recorded(seat) for seat in after.seat_numbers())
    if after.commitment is not None and ready:
        assert after.rule_set is not None
        deadline = at_ms + after.rule_set.seed_window_seconds * MS_PER_SECOND
        events.append(SeedWindowOpened(deadline_ms=deadline))
    return events


def record_stake(state: S, c: RecordStakeReserved, apply: Apply[S]) -> list[Event]:
    """StakeReserved (and the window if it was the last thing awaited). Raises RuleViolation
    (WRONG_PHASE, NOT_IN_HAND, DUPLICATE)."""
    require_phase(state, HandPhase.PREPARING)
    require_seated(state, c.seat)
    if state.stake_recorded(c.seat):
        raise fail(ErrorCode.DUPLICATE, f"seat {c.seat}'s stake is already recorded")
    events: list[Event] = [StakeReserved(seat=c.seat, amount_hundredths=c.amount_hundredths)]
    return _window_if_ready(state, events, c.at_ms, apply)


def record_commitment(state: S, c: RecordSeedCommitment, apply: Apply[S]) -> list[Event]:
    """SeedCommitted (lowercased; and the window if it was the last thing awaited). Raises
    RuleViolation (WRONG_PHASE, DUPLICATE, INVALID_COMMAND for anything but 64 hex digits)."""
    require_phase(state, HandPhase.PREPARING)
    if state.commitment is not None:
        raise fail(ErrorCode.DUPLICATE, "the seed commitment is already recorded")
    if len(c.commitment) != 64 or not is_hex(c.commitment):
        raise fail(ErrorCode.INVALID_COMMAND, "a commitment is a SHA-256 as 64 hex digits")
    events: list[Event] = [SeedCommitted(commitment=c.commitment.lower())]
    return _window_if_ready(state, events, c.at_ms, apply)


def seeds_locked(state: HandLife) -> SeedsLocked:
    """The lock of the seed window: every seat's client seed, ``""`` for one that sent none."""
    assert state.commitment is not None
    return SeedsLocked(
        commitment=state.commitment,
        client_seeds=tuple(
            SeatSeed(seat, state.client_seed(seat) or "") for seat in state.seat_numbers()
        ),
    )


def contribute_seed(state: S, c: ContributeClientSeed, apply: Apply[S]) -> list[Event]:
    """ClientSeedContributed (lowercased), then SeedsLocked once every seat's is in. Raises
    RuleViolation (WRONG_PHASE, NOT_IN_HAND, DUPLICATE, INVALID_COMMAND for a seed that is not
    hex or longer than 256 bytes)."""
    require_phase(state, HandPhase.SEED_WINDOW)
    require_seated(state, c.seat)
    if state.client_seed(c.seat) is not None:
        raise fail(ErrorCode.DUPLICATE, f"seat {c.seat} already contributed its seed")
    if not is_hex(c.seed_hex) or len(c.seed_hex) > 2 * MAX_CLIENT_SEED_BYTES:
        raise fail(
            ErrorCode.INVALID_COMMAND,
            f"a client seed is hex, at most {MAX_CLIENT_SEED_BYTES} bytes",
        )
    events: list[Event] = [ClientSeedContributed(seat=c.seat, seed_hex=c.seed_hex.lower())]
    after = _fold(state, events, apply)
    if all(after.client_seed(seat) is not None for seat in after.seat_numbers()):
        events.append(seeds_locked(after))
    return events


def closes_seed_window(state: HandLife, c: TurnTimeout) -> bool:
    """Whether ``c`` is the clock closing the seed window (turn 0 while it is open): the hand
    locks the seeds it has."""
    return state.phase is HandPhase.SEED_WINDOW and c.turn_no == 0


def check_deal(state: HandLife, c: Deal, shape: DealShape) -> None:
    """Check the dealer's deal against the hand: awaited, one hand of ``hand_size`` cards to
    each seat dealt in, a wild cut exactly when ``shape`` (the variant's deal) cuts one, every
    card of the rule set's shoe once, a stock. Raises RuleViolation (WRONG_PHASE,
    INVALID_DEAL)."""
    require_phase(state, HandPhase.AWAITING_DEAL)
    rules = state.rule_set
    assert rules is not None
    shoe = rules.shoe
    if sorted(h.seat for h in c.hands) != list(state.seat_numbers()):
        raise fail(ErrorCode.INVALID_DEAL, "the deal must give one hand to each seat in the hand")
    if any(len(h.cards) != rules.hand_size for h in c.hands):
        raise fail(ErrorCode.INVALID_DEAL, f"each seat is dealt {rules.hand_size} cards")
    if shape.wild_cut and c.wild_cut is None:
        raise fail(ErrorCode.INVALID_DEAL, "this deal cuts a card for the wild rank")
    if not shape.wild_cut and c.wild_cut is not None:
        raise fail(ErrorCode.INVALID_DEAL, "this deal cuts no wild card")
    everything = [card for h in c.hands for card in h.cards] + [c.first_open, *c.stock]
    if c.wild_cut is not None:
        everything.append(c.wild_cut)
    if len(set(everything)) != len(everything) or len(everything) != shoe.size:
        raise fail(ErrorCode.INVALID_DEAL, "the deal must use every card of the shoe once")
    if any(card not in shoe for card in everything):
        raise fail(ErrorCode.INVALID_DEAL, "the deal holds a card that is not in the shoe")
    if not c.stock:
        raise fail(ErrorCode.INVALID_DEAL, "the stock must not be empty")


def leave_before_deal(state: HandLife, c: LeaveHand) -> list[Event] | None:
    """The HandAborted of a seat leaving a hand not dealt yet; None once it is dealt (the
    variant decides). Raises RuleViolation(NOT_IN_HAND)."""
    require_seated(state, c.seat)
    if state.phase in BEFORE_THE_DEAL:
        return [HandAborted(reason=f"seat {c.seat} left before the deal", at_ms=c.at_ms)]
    return None


def abort(state: HandLife, c: AbortHand) -> list[Event]:
    """HandAborted of a started hand not over. Raises RuleViolation(WRONG_PHASE)."""
    require_phase(state, *BEFORE_THE_DEAL, HandPhase.PLAYING)
    return [HandAborted(reason=c.reason, at_ms=c.at_ms)]


# --- turns --------------------------------------------------------------------------------------


def turn_started(rule_set: RuleSet, seat: int, turn_no: int, at_ms: int) -> TurnStarted:
    """Turn ``turn_no`` of ``seat``, due the rule set's ``turn_seconds`` after ``at_ms``."""
    deadline = at_ms + rule_set.turn_seconds * MS_PER_SECOND
    return TurnStarted(seat=seat, turn_no=turn_no, deadline_ms=deadline)


# --- apply --------------------------------------------------------------------------------------


def apply_lifecycle(state: S, event: Event) -> S | None:
    """The state after a lifecycle event every variant folds the same way (SeedCommitted,
    SeedWindowOpened, HandEnded, HandAborted) on the fields :class:`HandLife` names; None for
    any other event. ``state`` is a dataclass with those fields."""
    changes: dict[str, Any]
    if isinstance(event, SeedCommitted):
        changes = {"commitment": event.commitment}
    elif isinstance(event, SeedWindowOpened):
        changes = {"phase": HandPhase.SEED_WINDOW, "seed_deadline_ms": event.deadline_ms}
    elif isinstance(event, HandEnded):
        changes = {"phase": HandPhase.ENDED, "result": event, "turn_deadline_ms": None}
    elif isinstance(event, HandAborted):
        changes = {
            "phase": HandPhase.ABORTED,
            "result": event,
            "turn_deadline_ms": None,
            "seed_deadline_ms": None,
        }
    else:
        return None
    return replace(state, **changes)  # type: ignore[type-var]


def seed_window_deadline(state: HandLife) -> int | None:
    """The seed window's deadline while it is open, else None (for the clock)."""
    return state.seed_deadline_ms if state.phase is HandPhase.SEED_WINDOW else None


def turn_deadline(state: HandLife) -> int | None:
    """The turn's deadline while the hand is in play, else None (for the clock)."""
    return state.turn_deadline_ms if state.phase is HandPhase.PLAYING else None


def is_over(state: HandLife) -> bool:
    """Whether the hand has ended or been aborted."""
    return state.phase in (HandPhase.ENDED, HandPhase.ABORTED)


@dataclass(frozen=True, eq=False)
class LifecycleVariant(VariantRules, Generic[S]):
    """A variant whose hands live this lifecycle (Indian points, gin, Rummy 500), given its
    hand's functions: ``initial_state`` (the state before any event), ``decide``,
    ``legal_commands``, ``apply``, ``view`` and ``redact`` as the variant interface
    (:class:`rummy_rules.variant.Variant`) names them, and ``turn_no`` (the turn being played,
    from the state). What every such hand answers alike comes from here: ``fold``
    (:func:`~rummy_rules.variant.fold_with`), ``deadline`` (the seed window while it is open,
    else the turn while the hand is in play), ``is_over`` and ``result`` (the state's closing
    event). A variant class adds its class attributes (``name``, ...), ``bot`` and
    ``house_rule_set``. Stateless: every function is pure."""

    initial_state: Callable[[], S]
    decide: Callable[[S, Command], tuple[Event, ...]]
    legal_commands: Callable[[S, int], tuple[Command, ...]]
    apply: Callable[[S, Event], S]
    view: Callable[[S, int], PlayerView]
    redact: Callable[[Event, int], Event]
    turn_no: Callable[[S], int]

    def fold(self, events: Iterable[Event], state: S | None = None) -> S:
        return fold_with(self, events, state)

    def deadline(self, state: S) -> Deadline | None:
        return clock_deadline(
            seed_window_deadline(state), self.turn_no(state), turn_deadline(state)
        )

    def is_over(self, state: S) -> bool:
        return is_over(state)

    def result(self, state: S) -> HandEnded | HandAborted | None:
        return state.result
