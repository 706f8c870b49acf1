"""The shuffle spec ``bb-shuffle-v1``: a deterministic, unbiased deck order and deal.

Inputs: the server seed (32 bytes), each seat's client seed (bytes, possibly empty) and the hand id.
Everything is specified byte-exactly in ``docs/rules/shuffle-spec.md`` (the rules it serves:
``docs/rules/deal.md``); this module is the
reference implementation, and ``libs/rules/vectors/`` holds test vectors checked by an independent
JavaScript implementation, the verifier page's (``web/verify/shuffle.js``). In short:

1. ``hand_key = HMAC-SHA256(key=server_seed, msg=material)`` where ``material`` is the
   length-prefixed encoding of the version label, the hand id, and every (seat, client seed).
2. A labelled byte stream: block ``i`` is ``HMAC-SHA256(key=hand_key, msg=lp(label) || u64be(i))``;
   label ``"deal"`` for the deal, ``"reshuffle/1"``, ``"reshuffle/2"``... for stock reshuffles.
3. Uniform integers below ``n`` from 4-byte big-endian words with rejection sampling (no modulo
   bias), driving a Fisher-Yates shuffle of the canonical shoe order (``rummy_rules.deck``).
4. The deal: ``hand_size`` cards to each seat round-robin from the seat after the dealer, then the
   wild-card cut, then the first open card of the discard pile; the rest is the stock, top first.

Pure: no clock, no randomness of its own; the same inputs always give the same deck.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .cards import Card, Rank
from .deck import Shoe
from .rules import CUT_AND_UPCARD, DealShape

SHUFFLE_VERSION = "bb-shuffle-v1"
"""Version label of this spec; it is the first field of the key material."""

SERVER_SEED_BYTES = 32
MAX_CLIENT_SEED_BYTES = 256
DEAL_LABEL = "deal"
_U32 = 1 << 32


def reshuffle_label(number: int) -> str:
    """Sub-stream label of the ``number``-th stock reshuffle of a hand (1, 2, ...): ``reshuffle/1``.

    Raises ValueError if ``number`` < 1.
    """
    if number < 1:
        raise ValueError(f"reshuffles are numbered from 1, got {number}")
    return f"reshuffle/{number}"


def commitment(server_seed: bytes) -> str:
    """The public commitment to a server seed: SHA-256 of its 32 bytes, lowercase hex (64 chars;
    ``docs/rules/shuffle-spec.md#commitment``).

    Raises ValueError if the seed is not 32 bytes.
    """
    _check_server_seed(server_seed)
    return hashlib.sha256(server_seed).hexdigest()


# --- encoding ---------------------------------------------------------------------------------


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def _lp(data: bytes) -> bytes:
    """Length-prefixed bytes: 4-byte big-endian length, then the bytes."""
    return _u32(len(data)) + data


def _check_server_seed(server_seed: bytes) -> None:
    if not isinstance(server_seed, bytes | bytearray) or len(server_seed) != SERVER_SEED_BYTES:
        raise ValueError(f"the server seed must be exactly {SERVER_SEED_BYTES} bytes")


@dataclass(frozen=True)
class ShuffleInputs:
    """Everything the deck of a hand is derived from.

    - ``server_seed``: 32 bytes, secret until the hand ends (its SHA-256 is the commitment).
    - ``hand_id``: the hand's id as a string (UTF-8 encoded in the material).
    - ``client_seeds``: ``(seat, seed)`` pairs, one per seat dealt in; a seat that sent nothing
      contributes ``b""``. Stored sorted by seat; each seed at most 256 bytes.

    Raises ValueError for a server seed that is not 32 bytes, an empty hand id, a repeated seat,
    a negative seat or an over-long client seed.
    """

    server_seed: bytes
    hand_id: str
    client_seeds: tuple[tuple[int, bytes], ...]

    def __post_init__(self) -> None:
        _check_server_seed(self.server_seed)
        object.__setattr__(self, "server_seed", bytes(self.server_seed))
        if not self.hand_id:
            raise ValueError("the hand id must not be empty")
        seeds = tuple(sorted((int(seat), bytes(seed)) for seat, seed in self.client_seeds))
        seats = [seat for seat, _ in seeds]
        if len(set(seats)) != len(seats):
            raise ValueError(f"a seat appears twice among the client seeds: {seats}")
        for seat, seed in seeds:
            if not 0 <= seat < _U32:
                raise ValueError(f"seat numbers must be 0..2^32-1, got {seat}")
            if len(seed) > MAX_CLIENT_SEED_BYTES:
                raise ValueError(
                    f"seat {seat}'s client seed is {len(seed)} bytes; "
                    f"at most {MAX_CLIENT_SEED_BYTES} are allowed"
                )
        object.__setattr__(self, "client_seeds", seeds)

    @classmethod
    def of(
        cls, server_seed: bytes, hand_id: str, client_seeds: Mapping[int, bytes]
    ) -> ShuffleInputs:
        """Build from a mapping seat -> client seed."""
        return cls(server_seed, hand_id, tuple(client_seeds.items()))

    @property
    def material(self) -> bytes:
        """The key material, byte-exact:

        ``lp(version) || lp(hand_id) || u32(count) || (u32(seat) || lp(seed))`` per seat, by seat.
        """
        out = [_lp(SHUFFLE_VERSION.encode("ascii")), _lp(self.hand_id.encode("utf-8"))]
        out.append(_u32(len(self.client_seeds)))
        for seat, seed in self.client_seeds:
            out.append(_u32(seat) + _lp(seed))
        return b"".join(out)

    @property
    def hand_key(self) -> bytes:
        """``HMAC-SHA256(key=server_seed, msg=material)``: 32 bytes."""
        return hmac.new(self.server_seed, self.material, hashlib.sha256).digest()


# --- byte stream and uniform integers ---------------------------------------------------------


class ByteSource(Protocol):
    """Anything that hands out bytes in order."""

    def read(self, n: int) -> bytes: ...


class HmacStream:
    """The labelled byte stream: blocks ``HMAC-SHA256(key, lp(label) || u64be(i))`` for i = 0, 1, ..

    Stateful (it remembers how far it has been read); build a new one to start over.
    """

    def __init__(self, key: bytes, label: str) -> None:
        self._key = bytes(key)
        self._prefix = _lp(label.encode("ascii"))
        self._counter = 0
        self._buffer = b""

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream."""
        while len(self._buffer) < n:
            block = hmac.new(
                self._key, self._prefix + self._counter.to_bytes(8, "big"), hashlib.sha256
            ).digest()
            self._buffer += block
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


def uniform_below(n: int, source: ByteSource) -> int:
    """A uniform integer in ``[0, n)`` for ``1 <= n <= 2^32``, by rejection sampling.

    Reads 4 bytes as a big-endian word ``x``; accepts when ``x < 2^32 - (2^32 mod n)`` and returns
    ``x mod n``, otherwise reads again. Every accepted residue is equally likely: no modulo bias.
    Raises ValueError for ``n`` out of range.
    """
    if not 1 <= n <= _U32:
        raise ValueError(f"n must be 1..2^32, got {n}")
    limit = _U32 - (_U32 % n)
    while True:
        x = int.from_bytes(source.read(4), "big")
        if x < limit:
            return x % n


def fisher_yates(items: Sequence[int], source: ByteSource) -> tuple[int, ...]:
    """Shuffle ``items`` (Fisher-Yates): for i from len-1 down to 1, swap a[i] and a[j] with
    ``j = uniform_below(i + 1)``."""
    a = list(items)
    for i in range(len(a) - 1, 0, -1):
        j = uniform_below(i + 1, source)
        a[i], a[j] = a[j], a[i]
    return tuple(a)


# --- deck order, deal and reshuffle -----------------------------------------------------------


def shuffled_order(inputs: ShuffleInputs, shoe: Shoe) -> tuple[int, ...]:
    """The shuffled shoe as canonical card indices; position 0 is dealt first."""
    return fisher_yates(range(shoe.size), HmacStream(inputs.hand_key, DEAL_LABEL))


def deal_order(seats: Iterable[int], dealer: int) -> tuple[int, ...]:
    """Seats in dealing (and playing) order: ascending seat numbers, starting with the first seat
    after the dealer and wrapping around, the dealer last (``docs/rules/deal.md#deal-order``).

    Raises ValueError if the dealer is not among the seats or a seat is repeated.
    """
    ordered = sorted(seats)
    if len(set(ordered)) != len(ordered):
        raise ValueError(f"a seat is listed twice: {ordered}")
    if dealer not in ordered:
        raise ValueError(f"the dealer (seat {dealer}) is not among the seats {ordered}")
    k = ordered.index(dealer) + 1
    return tuple(ordered[k:] + ordered[:k])


@dataclass(frozen=True)
class SeatHand:
    """The cards dealt to one seat, in the order they were dealt."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Deal:
    """The outcome of the deal.

    - ``order``: the whole shuffled shoe as canonical indices (position 0 dealt first).
    - ``hands``: one per seat, in dealing order (the seat after the dealer first).
    - ``wild_cut``: the card cut face up for the wild rank; out of play (None: the variant's
      deal cuts none).
    - ``first_open``: the first card of the discard pile (face up; None: the deal turns up none).
    - ``stock``: the rest, ``stock[0]`` is the top (drawn next).
    """

    order: tuple[int, ...]
    hands: tuple[SeatHand, ...]
    wild_cut: Card | None
    first_open: Card | None
    stock: tuple[Card, ...]

    @property
    def wild_rank(self) -> Rank | None:
        """The wild rank from the cut, or None when a printed joker was cut (then only printed
        jokers are wild) or nothing was cut."""
        return None if self.wild_cut is None else self.wild_cut.rank

    def hand_of(self, seat: int) -> tuple[Card, ...]:
        """The cards dealt to ``seat``. Raises KeyError if the seat was not dealt in."""
        for hand in self.hands:
            if hand.seat == seat:
                return hand.cards
        raise KeyError(seat)


def deal(
    inputs: ShuffleInputs,
    shoe: Shoe,
    seats: Iterable[int],
    dealer: int,
    hand_size: int,
    shape: DealShape = CUT_AND_UPCARD,
) -> Deal:
    """Shuffle the shoe from ``inputs`` and deal ``hand_size`` cards to each of ``seats``
    (``docs/rules/deal.md``; byte-exact: ``docs/rules/shuffle-spec.md#the-deal``).

    Round-robin one card at a time from the seat after ``dealer`` (see :func:`deal_order`), then
    the wild cut and the first open card as ``shape`` (the variant's deal) turns them up (the
    default: both); the rest is the stock (top first).

    Raises ValueError if the seats differ from the seats of ``inputs.client_seeds`` (every seat
    dealt in has exactly one, possibly empty, client seed), if the dealer is not seated, fewer than
    2 seats, or the shoe is too small for the deal plus a one-card stock.
    """
    order_of_seats = deal_order(seats, dealer)
    seed_seats = tuple(seat for seat, _ in inputs.client_seeds)
    if tuple(sorted(order_of_seats)) != seed_seats:
        raise ValueError(
            f"the seats dealt in {sorted(order_of_seats)} must be exactly the seats with a "
            f"client seed {list(seed_seats)}"
        )
    if len(order_of_seats) < 2:
        raise ValueError("a deal needs at least 2 seats")
    if hand_size < 1:
        raise ValueError(f"hand_size must be >= 1, got {hand_size}")
    dealt = len(order_of_seats) * hand_size
    if dealt + shape.extra_cards + 1 > shoe.size:
        raise ValueError(
            f"a shoe of {shoe.size} cards cannot deal {hand_size} to {len(order_of_seats)} seats "
            f"plus {shape.extra_cards} card(s) turned up and a stock"
        )
    order = shuffled_order(inputs, shoe)
    cards = [shoe.index_to_card(i) for i in order]
    n = len(order_of_seats)
    hands = tuple(
        SeatHand(seat, tuple(cards[pos + k * n] for k in range(hand_size)))
        for pos, seat in enumerate(order_of_seats)
    )
    rest = iter(cards[dealt:])
    wild_cut = next(rest) if shape.wild_cut else None
    first_open = next(rest) if shape.upcard else None
    return Deal(
        order=order, hands=hands, wild_cut=wild_cut, first_open=first_open, stock=tuple(rest)
    )


def reshuffle(
    inputs: ShuffleInputs, shoe: Shoe, cards: Iterable[Card], number: int
) -> tuple[Card, ...]:
    """The new stock made from ``cards`` (the discard pile without its top card) at the
    ``number``-th reshuffle of the hand (1, 2, ...); the result's first card is the top
    (``docs/rules/deal.md#reshuffle``, ``docs/rules/shuffle-spec.md#reshuffle``).

    The cards are first sorted by canonical index, so the result depends only on which cards they
    are and on ``number``, then shuffled by Fisher-Yates on the ``reshuffle/<number>`` sub-stream.
    Raises ValueError if a card is not in the shoe or appears twice, or ``number`` < 1.
    """
    indices = sorted(shoe.card_to_index(c) for c in cards)
    if len(set(indices)) != len(indices):
        raise ValueError("a card appears twice in the pile to reshuffle")
    order = fisher_yates(indices, HmacStream(inputs.hand_key, reshuffle_label(number)))
    return tuple(shoe.index_to_card(i) for i in order)
