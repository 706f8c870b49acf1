"""The shuffle spec bb-shuffle-v1 (docs/rules/shuffle-spec.md): determinism, sensitivity to
every input, the deal layout, reshuffles, and the absence of bias."""

import hashlib
from collections import Counter
from itertools import permutations
from typing import Any

import pytest

from rummy_rules.cards import parse_card, printed_joker
from rummy_rules.deck import Shoe
from rummy_rules.shuffle import (
    Deal,
    HmacStream,
    ShuffleInputs,
    commitment,
    deal,
    deal_order,
    fisher_yates,
    reshuffle,
    reshuffle_label,
    uniform_below,
)

SHOE = Shoe(decks=2, printed_jokers=2)
SEED = hashlib.sha256(b"test server seed").digest()
SEEDS = {0: b"alice", 2: b"", 5: b"carol"}


def inputs(
    server_seed: bytes = SEED, hand_id: str = "h-1", seeds: dict[int, bytes] | None = None
) -> ShuffleInputs:
    return ShuffleInputs.of(server_seed, hand_id, SEEDS if seeds is None else seeds)


def order_of(inp: ShuffleInputs) -> tuple[int, ...]:
    return deal(inp, SHOE, [s for s, _ in inp.client_seeds], inp.client_seeds[0][0], 13).order


class FixedWords:
    """A byte source handing out the given 32-bit words, big-endian, and counting reads."""

    def __init__(self, words: list[int]) -> None:
        self.data = b"".join(w.to_bytes(4, "big") for w in words)
        self.pos = 0

    def read(self, n: int) -> bytes:
        out = self.data[self.pos : self.pos + n]
        assert len(out) == n, "stream exhausted"
        self.pos += n
        return out


def test_the_same_inputs_always_give_the_same_deal() -> None:
    a = deal(inputs(), SHOE, SEEDS.keys(), 2, 13)
    b = deal(inputs(), SHOE, [5, 0, 2], 2, 13)
    assert a == b


def test_the_order_of_client_seeds_given_does_not_matter() -> None:
    shuffled = {5: b"carol", 0: b"alice", 2: b""}
    assert inputs(seeds=shuffled).material == inputs().material


@pytest.mark.parametrize(
    "changed",
    [
        inputs(server_seed=hashlib.sha256(b"another seed").digest()),
        inputs(hand_id="h-2"),
        inputs(seeds={0: b"alice", 2: b"", 5: b"carol!"}),
        inputs(seeds={0: b"alice", 2: b"\x00", 5: b"carol"}),  # empty vs one zero byte
        inputs(seeds={0: b"alice", 3: b"", 5: b"carol"}),  # same seeds, other seat
        inputs(seeds={0: b"alicec", 2: b"", 5: b"arol"}),  # same bytes, other split
    ],
)
def test_changing_any_input_changes_the_deck(changed: ShuffleInputs) -> None:
    assert order_of(changed) != order_of(inputs())


def test_the_deck_is_a_permutation_of_the_shoe() -> None:
    assert sorted(order_of(inputs())) == list(range(SHOE.size))


def test_deal_order_starts_after_the_dealer_and_ends_with_him() -> None:
    assert deal_order([0, 1, 2, 3, 4, 5], 0) == (1, 2, 3, 4, 5, 0)
    assert deal_order([5, 2, 0], 2) == (5, 0, 2)
    assert deal_order([1, 3], 3) == (1, 3)
    with pytest.raises(ValueError, match="dealer"):
        deal_order([1, 3], 2)
    with pytest.raises(ValueError, match="twice"):
        deal_order([1, 1, 3], 3)


def test_cards_are_dealt_round_robin_then_cut_then_open_card_then_stock() -> None:
    d = deal(inputs(), SHOE, SEEDS.keys(), 2, 13)
    cards = [SHOE.index_to_card(i) for i in d.order]
    assert [h.seat for h in d.hands] == [5, 0, 2]
    assert d.hand_of(5)[:2] == (cards[0], cards[3])
    assert d.hand_of(0)[:2] == (cards[1], cards[4])
    assert d.hand_of(2)[-1] == cards[38]
    assert all(len(h.cards) == 13 for h in d.hands)
    assert (d.wild_cut, d.first_open) == (cards[39], cards[40])
    assert d.stock[0] == cards[41] and len(d.stock) == SHOE.size - 41
    everything = [c for h in d.hands for c in h.cards] + [d.wild_cut, d.first_open, *d.stock]
    assert len(everything) == SHOE.size and set(everything) == set(SHOE.cards)
    with pytest.raises(KeyError):
        d.hand_of(1)


def test_a_printed_joker_cut_makes_no_rank_wild() -> None:
    d = deal(inputs(), SHOE, SEEDS.keys(), 2, 13)
    jk = Deal(d.order, d.hands, printed_joker(1), d.first_open, d.stock)
    assert jk.wild_rank is None
    assert d.wild_cut is not None
    assert d.wild_rank == d.wild_cut.rank


def test_the_seats_dealt_in_must_be_the_seats_with_a_client_seed() -> None:
    with pytest.raises(ValueError, match="exactly the seats with a client seed"):
        deal(inputs(), SHOE, [0, 2], 2, 13)
    with pytest.raises(ValueError, match="cannot deal"):
        deal(inputs(), Shoe(1, 0), SEEDS.keys(), 2, 17)


def test_reshuffle_depends_only_on_which_cards_and_the_number() -> None:
    pile = [parse_card(f) for f in ["7H", "JK", "2C", "KD", "10S", "AH"]]
    pile[1] = printed_joker(1)
    first = reshuffle(inputs(), SHOE, pile, 1)
    assert reshuffle(inputs(), SHOE, list(reversed(pile)), 1) == first
    assert len(first) == len(pile) and set(first) == set(pile)
    assert reshuffle(inputs(), SHOE, pile, 2) != first
    with pytest.raises(ValueError, match="twice"):
        reshuffle(inputs(), SHOE, pile + pile[:1], 1)
    with pytest.raises(ValueError, match="numbered from 1"):
        reshuffle(inputs(), SHOE, pile, 0)
    assert reshuffle_label(3) == "reshuffle/3"


def test_reshuffle_streams_are_separate_from_the_deal_stream() -> None:
    key = inputs().hand_key
    assert HmacStream(key, "deal").read(32) != HmacStream(key, "reshuffle/1").read(32)


def test_the_stream_reads_the_same_in_any_chunking() -> None:
    key = inputs().hand_key
    whole = HmacStream(key, "deal").read(100)
    s = HmacStream(key, "deal")
    assert s.read(3) + s.read(33) + s.read(64) == whole


def test_commitment_is_the_sha256_of_the_server_seed() -> None:
    assert commitment(SEED) == hashlib.sha256(SEED).hexdigest()
    with pytest.raises(ValueError, match="32 bytes"):
        commitment(SEED[:31])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"server_seed": b"short"}, "exactly 32 bytes"),
        ({"hand_id": ""}, "hand id"),
        ({"seeds": {0: b"x" * 257, 1: b""}}, "at most 256"),
        ({"seeds": {-1: b"", 1: b""}}, "seat numbers"),
    ],
)
def test_malformed_shuffle_inputs_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        inputs(**kwargs)


def test_a_seat_cannot_give_two_client_seeds() -> None:
    with pytest.raises(ValueError, match="twice"):
        ShuffleInputs(SEED, "h", ((1, b"a"), (1, b"b")))


def test_rejection_sampling_has_no_modulo_bias() -> None:
    # n = 3 * 2^30: a plain "x mod n" would send words in [n, 2^32) to [0, 2^30) and make that
    # third twice as likely. 1024 evenly spread words, each rejected one (>= n) followed by three
    # accepted ones: the 768 below n are accepted, the 256 others rejected.
    n = 3 << 30
    words = [w for k in range(256) for w in (768 + k, 3 * k, 3 * k + 1, 3 * k + 2)]
    source = FixedWords([w << 22 for w in words])
    draws = [uniform_below(n, source) for _ in range(768)]
    assert source.pos == 1024 * 4  # every rejected word consumed, nothing more
    thirds = Counter(x // (1 << 30) for x in draws)
    assert thirds == {0: 256, 1: 256, 2: 256}


def test_the_largest_word_is_rejected_when_it_would_bias_the_result() -> None:
    # 2^32 mod 3 == 1, so only 0xFFFFFFFF is rejected for n = 3
    source = FixedWords([0xFFFFFFFF, 0xFFFFFFFE, 7])
    assert uniform_below(3, source) == 0xFFFFFFFE % 3
    assert uniform_below(3, source) == 1
    assert uniform_below(1, FixedWords([0xFFFFFFFF])) == 0
    with pytest.raises(ValueError):
        uniform_below(0, source)
    with pytest.raises(ValueError):
        uniform_below((1 << 32) + 1, source)


def test_fisher_yates_swaps_from_the_end_with_the_drawn_index() -> None:
    # i=3, j=1: [10, 13, 12, 11]; i=2, j=0: [12, 13, 10, 11]; i=1, j=1: unchanged
    assert fisher_yates([10, 11, 12, 13], FixedWords([1, 0, 1])) == (12, 13, 10, 11)


def test_every_permutation_of_four_cards_is_equally_likely() -> None:
    # 4800 shuffles of 4 items, 24 permutations, 200 expected each: chi-square with 23 degrees of
    # freedom stays under 49.7 with probability 0.999 (the seeds are fixed, so this never flakes).
    trials = 4800
    counts = Counter(
        fisher_yates(range(4), HmacStream(hashlib.sha256(b"%d" % k).digest(), "deal"))
        for k in range(trials)
    )
    assert set(counts) == set(permutations(range(4)))
    expected = trials / 24
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 49.7


def test_every_card_is_equally_likely_to_be_dealt_first() -> None:
    # 1590 deals from a 106-card shoe, 15 expected per card: chi-square with 105 degrees of freedom
    # stays under 149.4 with probability 0.999.
    trials = 1590
    counts = Counter(
        fisher_yates(range(SHOE.size), HmacStream(hashlib.sha256(b"p%d" % k).digest(), "deal"))[0]
        for k in range(trials)
    )
    expected = trials / SHOE.size
    chi2 = sum((counts.get(i, 0) - expected) ** 2 / expected for i in range(SHOE.size))
    assert chi2 < 149.4
