"""Hands of any variant dealt from a seeded shuffle and played by a test's own random policy,
recorded with the state before each event (:class:`RandomHand`), and the check every variant's
wire passes on them (:func:`assert_round_trips`: a whole hand written as the table stream's
payloads and read back gives the same rules events). Not a test module."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from rummy_game import stream_payloads
from rummy_rules import commands as cmd
from rummy_rules.events import Event, HandStarted, SeatAccount
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs

from .variant_play import shuffled_deal

#: The hand's clock at its start (ms since the epoch): every command up to the deal is stamped so.
T0 = 1_700_000_000_000


class RandomHand:
    """The hand ``h{seed}`` of ``variant`` under ``rule_set`` at every seat of it (account
    ``acct-{seat}``, dealer ``seed % seats``), run up to its play: HandStarted, the stakes (0),
    the commitment of the server seed SHA-256(``str(seed)``), each seat's client seed
    (``client_seeds``, bytes by seat; none given: empty) and the deal of the variant's layout.
    Then :meth:`run` each command of the play; ``events`` and ``before`` (the state each event
    was applied to) line up."""

    def __init__(
        self,
        variant: Any,
        rule_set: RuleSet,
        seed: int,
        client_seeds: Mapping[int, bytes] | None = None,
    ) -> None:
        self.variant = variant
        self.state: Any = variant.initial_state()
        self.events: list[Event] = []
        self.before: list[Any] = []
        seats = tuple(range(rule_set.seats))
        dealer = seed % len(seats)
        hand_id = f"h{seed}"
        server_seed = hashlib.sha256(str(seed).encode()).digest()
        seeds = {s: b"" for s in seats} | dict(client_seeds or {})
        accounts = tuple(SeatAccount(s, f"acct-{s}") for s in seats)
        self.run(
            cmd.StartHand(
                hand_id=hand_id, seats=accounts, dealer_seat=dealer, rule_set=rule_set, at_ms=T0
            )
        )
        for s in seats:
            self.run(cmd.RecordStakeReserved(seat=s, amount_hundredths=0, at_ms=T0))
        commitment = hashlib.sha256(server_seed).hexdigest()
        self.run(cmd.RecordSeedCommitment(commitment=commitment, at_ms=T0))
        for s in seats:
            self.run(cmd.ContributeClientSeed(seat=s, seed_hex=seeds[s].hex(), at_ms=T0))
        inputs = ShuffleInputs.of(server_seed, hand_id, seeds)
        self.run(shuffled_deal(variant, rule_set, inputs, seats, dealer, T0))

    def run(self, command: Any) -> None:
        """Decide ``command`` in the current state and apply each of its events."""
        for event in self.variant.decide(self.state, command):
            self.before.append(self.state)
            self.events.append(event)
            self.state = self.variant.apply(self.state, event)


def assert_round_trips(events: list[Event]) -> None:
    """A whole hand's ``events`` (its HandStarted first) written as the table stream's
    payloads (``rummy_game.stream_payloads``) and read back are the same events, one by one."""
    started = events[0]
    assert isinstance(started, HandStarted)
    started_pb = stream_payloads.hand_started_to_pb(started, 1)
    assert stream_payloads.hand_started_from_pb(started_pb, started.at_ms) == started
    ctx = stream_payloads.hand_context(started_pb)
    for event in events[1:]:
        payload = stream_payloads.to_payload(event, ctx)
        at_ms = getattr(event, "at_ms", 0)
        assert stream_payloads.from_payload(payload, ctx, at_ms) == (event,), type(event).__name__
