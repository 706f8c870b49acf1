"""The start of a hand played in-process for a verifier test's bundle (gin_bundles.py,
rummy500_bundles.py): HandStarted, every seat's stake, the seed commitment, every client seed,
and the deal the variant's layout asks for, from the shuffle of the server seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rummy_rules import commands as cmd
from rummy_rules.events import SeatAccount
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs, deal


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
    layout = variant.deal_layout(rules)
    inputs = ShuffleInputs(server_seed, hand_id, tuple((s, seeds[s]) for s in seats))
    dealt = deal(inputs, layout.shoe, seats, dealer, layout.hand_size, layout.shape)
    assert dealt.first_open is not None and dealt.wild_cut is None
    run(
        cmd.Deal(
            hands=dealt.hands,
            wild_cut=None,
            first_open=dealt.first_open,
            stock=dealt.stock,
            at_ms=at(),
        )
    )
