"""Regenerate the shuffle test vectors (``shuffle-v1.json``) from the reference implementation.

    .venv/bin/python libs/rules/vectors/generate.py          # rewrite shuffle-v1.json
    .venv/bin/python libs/rules/vectors/generate.py --check  # exit 1 if the file is stale

The inputs below are fixed; every expected value is computed by ``rummy_rules.shuffle``. A test
(``libs/rules/tests/test_shuffle_vectors_node.py``) fails if the checked-in file differs from what
this script renders, so the vectors cannot go stale silently. Server seeds are
``SHA-256("bb-shuffle-v1 test vector <name>")`` so anyone can see they were not picked by hand.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from rummy_rules.deck import Shoe
from rummy_rules.rules import CUT_AND_UPCARD, DealShape
from rummy_rules.shuffle import (
    DEAL_LABEL,
    SHUFFLE_VERSION,
    HmacStream,
    ShuffleInputs,
    commitment,
    deal,
    reshuffle,
)

VECTORS_FILE = Path(__file__).with_name("shuffle-v1.json")
STREAM_PREFIX_BYTES = 64


def _server_seed(name: str) -> bytes:
    return hashlib.sha256(f"{SHUFFLE_VERSION} test vector {name}".encode()).digest()


def _card(shoe: Shoe, index: int) -> dict[str, Any]:
    return {"index": index, "card": shoe.index_to_card(index).face}


def _inputs_json(inputs: ShuffleInputs, shoe: Shoe) -> dict[str, Any]:
    return {
        "server_seed_hex": inputs.server_seed.hex(),
        "hand_id": inputs.hand_id,
        "client_seeds": [{"seat": s, "seed_hex": seed.hex()} for s, seed in inputs.client_seeds],
        "decks": shoe.decks,
        "printed_jokers": shoe.printed_jokers,
    }


def _deal_case(
    name: str,
    shoe: Shoe,
    hand_id: str,
    client_seeds: dict[int, bytes],
    dealer: int,
    hand_size: int = 13,
    shape: DealShape = CUT_AND_UPCARD,
) -> dict[str, Any]:
    inputs = ShuffleInputs.of(_server_seed(name), hand_id, client_seeds)
    result = deal(inputs, shoe, client_seeds.keys(), dealer, hand_size, shape)
    # What the deal turns up after the hands, in order (shuffle spec section 7, steps 4-6).
    rest = iter(result.order[len(client_seeds) * hand_size :])
    cut = next(rest) if shape.wild_cut else None
    upcard = next(rest) if shape.upcard else None
    return {
        "name": name,
        **_inputs_json(inputs, shoe),
        "seats": sorted(client_seeds),
        "dealer": dealer,
        "hand_size": hand_size,
        "deal_shape": {"wild_cut": shape.wild_cut, "upcard": shape.upcard},
        "expected": {
            "commitment_hex": commitment(inputs.server_seed),
            "material_hex": inputs.material.hex(),
            "hand_key_hex": inputs.hand_key.hex(),
            "deal_stream_prefix_hex": HmacStream(inputs.hand_key, DEAL_LABEL)
            .read(STREAM_PREFIX_BYTES)
            .hex(),
            "order_indices": list(result.order),
            "order_cards": [shoe.index_to_card(i).face for i in result.order],
            "hands": [
                {
                    "seat": h.seat,
                    "indices": [shoe.card_to_index(c) for c in h.cards],
                    "cards": [c.face for c in h.cards],
                }
                for h in result.hands
            ],
            "wild_cut": None if cut is None else _card(shoe, cut),
            "wild_rank": (
                None
                if result.wild_rank is None or result.wild_cut is None
                else result.wild_cut.face[:-1]
            ),
            "first_open": None if upcard is None else _card(shoe, upcard),
            "stock_top": _card(shoe, next(rest)),
            "stock_size": len(result.stock),
        },
    }


def _first_hand_id_with_printed_joker_cut(shoe: Shoe, seeds: dict[int, bytes], dealer: int) -> str:
    """The first hand id ``joker-cut-<k>`` whose wild cut is a printed joker (deterministic)."""
    name = "joker-cut"
    for k in range(10_000):
        hand_id = f"joker-cut-{k}"
        inputs = ShuffleInputs.of(_server_seed(name), hand_id, seeds)
        cut = deal(inputs, shoe, seeds.keys(), dealer, 13).wild_cut
        if cut is not None and cut.is_printed_joker:
            return hand_id
    raise RuntimeError("no printed-joker cut found")  # pragma: no cover


def _reshuffle_case(
    name: str,
    shoe: Shoe,
    hand_id: str,
    client_seeds: dict[int, bytes],
    pile: list[int],
    number: int,
) -> dict[str, Any]:
    inputs = ShuffleInputs.of(_server_seed(name), hand_id, client_seeds)
    new_stock = reshuffle(inputs, shoe, [shoe.index_to_card(i) for i in pile], number)
    return {
        "name": name,
        **_inputs_json(inputs, shoe),
        "number": number,
        "label": f"reshuffle/{number}",
        "pile_indices": pile,
        "expected": {
            "hand_key_hex": inputs.hand_key.hex(),
            "order_indices": [shoe.card_to_index(c) for c in new_stock],
            "order_cards": [c.face for c in new_stock],
        },
    }


def build_vectors() -> dict[str, Any]:
    """All vectors as a JSON-ready dict."""
    two = Shoe(decks=2, printed_jokers=2)
    three = Shoe(decks=3, printed_jokers=3)
    rulebook = Shoe(decks=2, printed_jokers=4)  # the rulebook's Indian shoe, 108 cards
    heads_up = Shoe(decks=1, printed_jokers=2)  # its one-deck option for two players, 54 cards
    gin = Shoe(decks=1, printed_jokers=0)  # the gin family's one deck, 52 cards
    two_plain = Shoe(decks=2, printed_jokers=0)  # Rummy 500's two decks (5-8 seats), 104 cards
    no_cut = DealShape(wild_cut=False, upcard=True)  # gin's and Rummy 500's: no cut, an upcard
    six_seeds = {s: f"seat {s} says hello".encode() for s in range(6)}
    joker_seeds = {0: b"", 1: b"\x00\x01", 2: b"abc"}
    # A pile in table order (not sorted) so implementations must sort by canonical index first.
    pile = [97, 3, 104, 55, 12, 12 + 52, 40, 0, 88, 71, 105, 26, 19, 60, 33]
    return {
        "spec": SHUFFLE_VERSION,
        "document": "docs/rules/shuffle-spec.md",
        "generated_by": "libs/rules/vectors/generate.py",
        "deals": [
            _deal_case("six-seats-all-seeds", two, "hand-0001", six_seeds, dealer=0),
            _deal_case(
                "two-of-four-seats-empty-seed",
                two,
                "tbl-7/hand-é-42",
                {1: b"", 3: bytes.fromhex("deadbeef")},
                dealer=3,
            ),
            _deal_case(
                "eight-seats-three-decks",
                three,
                "8f3c2a5e-0b7d-4c1e-9a36-2d5f1e7b9c40",
                {s: bytes([s]) * (s + 1) for s in range(8)},
                dealer=7,
            ),
            _deal_case(
                "rulebook-shoe-five-seats",
                rulebook,
                "pool-101/deal-3",
                {s: f"rulebook {s}".encode() for s in range(5)},
                dealer=2,
            ),
            _deal_case(
                "heads-up-one-deck",
                heads_up,
                "deals-2/deal-1",
                {0: b"heads", 1: b""},
                dealer=1,
            ),
            _deal_case(
                "joker-cut",
                two,
                _first_hand_id_with_printed_joker_cut(two, joker_seeds, dealer=1),
                joker_seeds,
                dealer=1,
            ),
            _deal_case(
                "gin-dealer-seat-0",
                gin,
                "gin-7/deal-1",
                {0: b"gin seat 0", 1: b"gin seat 1"},
                dealer=0,
                hand_size=10,
                shape=no_cut,
            ),
            _deal_case(
                "gin-dealer-seat-1-empty-seed",
                gin,
                "gin-7/deal-2",
                {0: b"", 1: bytes.fromhex("c0ffee")},
                dealer=1,
                hand_size=10,
                shape=no_cut,
            ),
            _deal_case(
                "rummy500-four-seats-one-deck",
                gin,
                "r500-3/round-1",
                {s: f"500 seat {s}".encode() for s in range(4)},
                dealer=2,
                hand_size=7,
                shape=no_cut,
            ),
            _deal_case(
                "rummy500-six-seats-two-decks",
                two_plain,
                "r500-9/round-4",
                {0: b"", 1: b"\x05", 2: b"six", 3: b"", 4: b"seats", 5: b"\xff\x00"},
                dealer=5,
                hand_size=7,
                shape=no_cut,
            ),
            _deal_case(
                "rummy500-three-seats-thirteen-cards",
                gin,
                "r500-2/round-2",
                {0: b"a", 1: b"b", 2: b"c"},
                dealer=0,
                hand_size=13,
                shape=no_cut,
            ),
        ],
        "reshuffles": [
            _reshuffle_case("reshuffle-1", two, "hand-0001", six_seeds, pile, 1),
            _reshuffle_case("reshuffle-2", two, "hand-0001", six_seeds, pile, 2),
        ],
    }


def render(obj: Any, indent: int = 0) -> str:
    """JSON with objects indented and lists of scalars on one line (stable, diff-friendly)."""
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad}  {json.dumps(k)}: {render(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and any(isinstance(v, dict | list) for v in obj):
        items = [f"{pad}  {render(v, indent + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def rendered() -> str:
    """The exact text ``shuffle-v1.json`` must contain."""
    return render(build_vectors()) + "\n"


def main(argv: list[str]) -> int:
    text = rendered()
    if "--check" in argv:
        current = VECTORS_FILE.read_text(encoding="utf-8") if VECTORS_FILE.exists() else ""
        if current != text:
            print(f"{VECTORS_FILE} is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    VECTORS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {VECTORS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
