"""A hand played in-process for a verifier test's bundle (gin_bundles.py, rummy500_bundles.py):
:class:`InProcessHand` decides and applies each command as a host does, numbers the events as
the table's stream does and assembles the proof bundle with the table service's own code
(``rummy_game.proof.bundle``); :func:`start_and_deal` plays its start: HandStarted, every seat's
stake, the seed commitment, every client seed, and the deal the variant's layout asks for, from
the shuffle of the server seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from rummy_game import proof
from rummy_rules import commands as cmd
from rummy_rules.events import SeatAccount
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs
from rummy_testing.variant_play import shuffled_deal

Bundle = dict[str, Any]
#: The first command's time (ms since the epoch); each command is stamped a millisecond later.
T0 = 1_800_000_000_000


def start_and_deal(
    variant: Any,
    rules: RuleSet,
    run: Callable[[Any], None],
    at: Callable[[], int],
    *,
    hand_id: str,
    seats: Sequence[int],
    dealer: int,
    seeds: Mapping[int, bytes],
    server_seed: bytes,
    account_prefix: str,
    stake_hundredths: int,
) -> None:
    """Run the hand's life up to its play through ``run`` (a command decided and applied),
    stamping each command with ``at()``."""
    run(
        cmd.StartHand(
            hand_id=hand_id,
            seats=tuple(SeatAccount(s, f"{account_prefix}-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rules,
            at_ms=at(),
        )
    )
    for s in seats:
        run(cmd.RecordStakeReserved(seat=s, amount_hundredths=stake_hundredths, at_ms=at()))
    run(cmd.RecordSeedCommitment(commitment=hashlib.sha256(server_seed).hexdigest(), at_ms=at()))
    for seat, seed in seeds.items():
        run(cmd.ContributeClientSeed(seat=seat, seed_hex=seed.hex(), at_ms=at()))
    inputs = ShuffleInputs(server_seed, hand_id, tuple((s, seeds[s]) for s in seats))
    dealt = shuffled_deal(variant, rules, inputs, seats, dealer, at())
    assert dealt.wild_cut is None
    run(dealt)


class InProcessHand:
    """One hand of ``variant`` under ``rules``, played in-process from its start to its deal
    (:func:`start_and_deal`, with the keyword arguments it takes); then :meth:`play` each move
    until ``variant.is_over(state)`` and take its :meth:`bundle`."""

    def __init__(
        self, variant: Any, rules: RuleSet, *, hand_id: str, server_seed: bytes, **start: Any
    ) -> None:
        self.variant = variant
        self.rules = rules
        self.hand_id = hand_id
        self.server_seed = server_seed
        self.state = variant.initial_state()
        #: ``(stream version, rules event)`` as the table's stream numbers them (from 1).
        self.events: list[tuple[int, Any]] = []
        self._now = T0
        start_and_deal(
            variant, rules, self.run, self.at, hand_id=hand_id, server_seed=server_seed, **start
        )

    def at(self) -> int:
        """The next command's time: a millisecond after the last one."""
        self._now += 1
        return self._now

    def run(self, command: Any) -> None:
        """Decide ``command`` and apply its events (raises the variant's RuleViolation)."""
        for event in self.variant.decide(self.state, command):
            self.state = self.variant.apply(self.state, event)
            self.events.append((len(self.events) + 1, event))

    def play(self, command: Any) -> None:
        """:meth:`run` ``command`` (a legal command, as ``legal_commands`` offers it) stamped
        now (:meth:`at`)."""
        self.run(replace(command, at_ms=self.at()))

    def bundle(self, table_id: str) -> Bundle:
        """The hand's proof bundle at ``table_id``, as the table service assembles it."""
        return proof.bundle(
            table_id,
            self.hand_id,
            variant=self.variant,
            shuffle_version="bb-shuffle-v1",
            rules_version=f"{self.rules.name}/{self.rules.version}",
            server_seed=self.server_seed,
            events=self.events,
        )
