"""The fairness service's use cases: commit a seed, record the locked client seeds, reveal,
and answer proofs (``docs/rules/promises.md#deal-fixed-before-seen``,
``docs/rules/hand-flow.md#reveal``).

Every handler takes a :class:`~rummy_fairness.application.ports.FairnessUnitOfWork`. Reactor
handlers (``on_*``) run inside the reactor's PostgreSQL transaction (a unit of work joined to it,
wired by ``entrypoints.events``), which also stores the consumed offset; the events they cause go
to the outbox in that transaction. Query handlers open their own transaction. Nothing here logs
a seed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.application.ports import FairnessUnitOfWork, SeedRow
from rummy_platform.envelope import Envelope, reaction_event_id, type_name
from rummy_platform.errors import InvalidArgument, NotFound
from rummy_platform.logging import get_logger
from rummy_platform.topics import FAIRNESS_EVENTS
from rummy_rules.shuffle import SERVER_SEED_BYTES, SHUFFLE_VERSION

_log = get_logger(__name__)

#: The seed-source port: hand id -> that hand's 32-byte server seed, drawn once per hand.
SeedSource = Callable[[str], bytes]
Clock = Callable[[], datetime]


def os_seed(hand_id: str) -> bytes:
    """A fresh server seed: 32 bytes from the operating system's CSPRNG (the production source;
    ``hand_id`` is not used, so nobody can predict a hand's seed)."""
    del hand_id
    return secrets.token_bytes(SERVER_SEED_BYTES)


def keyed_seed(key: bytes) -> SeedSource:
    """A deterministic seed source for tests and a simulator, NEVER for real money: the server
    seed of hand ``h`` is HMAC-SHA256(``key``, UTF-8 ``h``) (32 bytes), so whoever holds the key
    knows every deal in advance (``RUMMY_FAIRNESS_SEED_KEY``). Raises ValueError for an empty
    key."""
    if not key:
        raise ValueError("a seed key must not be empty")

    def seed(hand_id: str) -> bytes:
        return hmac.new(key, hand_id.encode(), hashlib.sha256).digest()

    return seed


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Counters:
    """Callbacks the bootstrap points at its metrics (no-ops by default)."""

    seed_committed: Callable[[], None] = lambda: None
    seed_revealed: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Proof:
    """What ``GetProof`` returns. ``server_seed`` is ``b""`` and ``client_seeds`` hold what was
    locked so far until the seed is revealed."""

    hand_id: str
    commitment_sha256: bytes
    revealed: bool
    server_seed: bytes
    client_seeds: tuple[tuple[int, bytes], ...]
    shuffle_version: str


class Fairness:
    """The handlers, with their seed source, clock, topic name and metric callbacks."""

    def __init__(
        self,
        *,
        seed_source: SeedSource = os_seed,
        clock: Clock = utc_now,
        topic: str = FAIRNESS_EVENTS,
        counters: Counters | None = None,
    ) -> None:
        self._seed_source = seed_source
        self._clock = clock
        self._topic = topic
        self._counters = counters or Counters()

    # -- reactions to table-events ------------------------------------------------------------

    def on_hand_started(self, uow: FairnessUnitOfWork, source: Envelope) -> None:
        """Draw and store a seed for the hand and put ``SeedCommitted`` in the outbox. A hand
        that already has a seed (a redelivered HandStarted) gets no second one."""
        started = source.payload
        assert isinstance(started, table_events.HandStarted)
        seed = self._seed_source(started.hand_id)
        if len(seed) != SERVER_SEED_BYTES:
            raise ValueError(f"the seed source gave {len(seed)} bytes, not {SERVER_SEED_BYTES}")
        commitment = hashlib.sha256(seed).digest()
        shuffle_version = source.shuffle_version or SHUFFLE_VERSION
        created = uow.seeds.insert(
            SeedRow(
                hand_id=started.hand_id,
                table_id=source.stream_id,
                server_seed=seed,
                commitment_sha256=commitment,
                rules_version=source.rules_version,
                shuffle_version=shuffle_version,
            )
        )
        del seed
        if not created:
            _log.info("hand already has a seed; redelivery ignored", hand_id=started.hand_id)
            return
        payload = fairness_events.SeedCommitted(
            hand_id=started.hand_id, commitment_sha256=commitment
        )
        self._emit(uow, source, payload, shuffle_version)
        self._counters.seed_committed()
        _log.info("seed committed", hand_id=started.hand_id, commitment=commitment.hex())

    def on_seeds_locked(self, uow: FairnessUnitOfWork, source: Envelope) -> None:
        """Record the client seeds exactly as locked (for ``GetProof``)."""
        locked = source.payload
        assert isinstance(locked, table_events.SeedsLocked)
        if uow.seeds.get(locked.hand_id) is None:
            _log.warning("seeds locked for a hand without a seed; ignored", hand_id=locked.hand_id)
            return
        uow.seeds.insert_locked_client_seeds(
            locked.hand_id, [(s.seat, s.client_seed) for s in locked.client_seeds]
        )

    def on_hand_over(self, uow: FairnessUnitOfWork, source: Envelope) -> None:
        """On HandEnded or HandAborted: reveal the seed through the outbox (once)."""
        over = source.payload
        assert isinstance(over, table_events.HandEnded | table_events.HandAborted)
        hand_id = over.hand_id
        row = uow.seeds.mark_revealed(hand_id)
        if row is None:
            _log.info("no unrevealed seed for the hand; nothing to reveal", hand_id=hand_id)
            return
        payload = fairness_events.SeedRevealed(
            hand_id=hand_id, server_seed=row.server_seed, commitment_sha256=row.commitment_sha256
        )
        self._emit(uow, source, payload, row.shuffle_version, rules_version=row.rules_version)
        self._counters.seed_revealed()
        _log.info("seed revealed", hand_id=hand_id)

    def _emit(
        self,
        uow: FairnessUnitOfWork,
        source: Envelope,
        payload: fairness_events.SeedCommitted | fairness_events.SeedRevealed,
        shuffle_version: str,
        *,
        rules_version: str | None = None,
    ) -> None:
        table_id = source.stream_id
        envelope = Envelope.new(
            payload,
            event_id=reaction_event_id(source, type_name(payload)),
            stream_id=table_id,
            stream_version=uow.outbox.next_stream_version(table_id),
            occurred_at=self._clock(),
            correlation_id=payload.hand_id,
            causation_id=source.event_id,
            rules_version=source.rules_version if rules_version is None else rules_version,
            shuffle_version=shuffle_version,
        )
        uow.outbox.write([(self._topic, envelope)])

    # -- queries ------------------------------------------------------------------------------

    def get_proof(self, uow: FairnessUnitOfWork, hand_id: str) -> Proof:
        """The hand's proof: before the reveal only the commitment (and the seeds as locked).

        Raises InvalidArgument for an empty hand id, NotFound for an unknown hand.
        """
        row, seeds = self._read(uow, hand_id)
        revealed = row.revealed_at is not None
        return Proof(
            hand_id=hand_id,
            commitment_sha256=row.commitment_sha256,
            revealed=revealed,
            server_seed=row.server_seed if revealed else b"",
            client_seeds=tuple(seeds),
            shuffle_version=row.shuffle_version,
        )

    def get_server_seed(self, uow: FairnessUnitOfWork, hand_id: str) -> bytes:
        """The hand's server seed, revealed or not (the caller must hold the service role).

        Raises InvalidArgument for an empty hand id, NotFound for an unknown hand.
        """
        row, _ = self._read(uow, hand_id)
        return row.server_seed

    @staticmethod
    def _read(uow: FairnessUnitOfWork, hand_id: str) -> tuple[SeedRow, list[tuple[int, bytes]]]:
        if not hand_id:
            raise InvalidArgument("hand_id must not be empty")
        with uow.transaction():
            row = uow.seeds.get(hand_id)
            if row is None:
                raise NotFound(f"no seed for hand {hand_id!r}: the hand is unknown to fairness")
            return row, uow.seeds.locked_client_seeds(hand_id)
