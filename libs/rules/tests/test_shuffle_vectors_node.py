"""The shuffle test vectors: current with the code, matched by the Python implementation through
its public API, and matched by the verifier page's own implementation (web/verify/shuffle.js, Web
Crypto only) run under Node by ``node web/verify/cli.mjs --vectors``."""

import importlib.util
import json
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rummy_rules.deck import Shoe
from rummy_rules.gin.rules import GIN_HAND_SIZE, GIN_SHOE, GinOptions
from rummy_rules.indian.rules import IndianPointsRules, IndianShoes
from rummy_rules.rules import DealShape
from rummy_rules.rummy500.rules import ONE_DECK, TWO_DECKS, Rummy500Options
from rummy_rules.shuffle import ShuffleInputs, commitment, deal, reshuffle
from rummy_testing.tools import required_executable

RULES = Path(__file__).resolve().parents[1]
VECTORS = RULES / "vectors" / "shuffle-v1.json"
VERIFY_JS = RULES.parents[1] / "web" / "verify" / "cli.mjs"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "shuffle_vectors_generate", RULES / "vectors" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def vectors() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return data


def shuffle_inputs(v: dict[str, Any]) -> ShuffleInputs:
    seeds = {c["seat"]: bytes.fromhex(c["seed_hex"]) for c in v["client_seeds"]}
    return ShuffleInputs.of(bytes.fromhex(v["server_seed_hex"]), v["hand_id"], seeds)


def node() -> str:
    return required_executable("node", "bash deploy/local/node.sh install")


def test_checked_in_vectors_are_exactly_what_the_code_generates() -> None:
    assert VECTORS.read_text(encoding="utf-8") == load_generator().rendered(), (
        "libs/rules/vectors/shuffle-v1.json is stale: "
        "run .venv/bin/python libs/rules/vectors/generate.py"
    )


def deal_shape(v: dict[str, Any]) -> DealShape:
    return DealShape(wild_cut=v["deal_shape"]["wild_cut"], upcard=v["deal_shape"]["upcard"])


def test_vectors_cover_every_shoe_a_table_deals_from_a_joker_cut_and_reshuffles() -> None:
    data = vectors()
    shoes = {(shoe.decks, shoe.printed_jokers) for o in IndianShoes for _, shoe in o.shoes}
    assert shoes == {(2, 2), (3, 3), (2, 4), (1, 2)}  # Bombay Baazi's, the rulebook's
    shoes.add((GIN_SHOE.decks, GIN_SHOE.printed_jokers))
    shoes |= {(shoe.decks, shoe.printed_jokers) for shoe in (ONE_DECK, TWO_DECKS)}  # Rummy 500
    assert {(v["decks"], v["printed_jokers"]) for v in data["deals"]} == shoes
    assert any(v["expected"]["wild_rank"] is None for v in data["deals"])
    assert any(c["seed_hex"] == "" for v in data["deals"] for c in v["client_seeds"])
    assert [v["number"] for v in data["reshuffles"]] == [1, 2]


def test_vectors_cover_each_variants_deal_shape_with_either_seat_dealing() -> None:
    data = vectors()
    indian = [v for v in data["deals"] if deal_shape(v) == IndianPointsRules.deal_shape]
    no_cut = [v for v in data["deals"] if deal_shape(v) == GinOptions.deal_shape]
    assert len(indian) + len(no_cut) == len(data["deals"])
    assert Rummy500Options.deal_shape == GinOptions.deal_shape  # the same deal, other sizes
    gin = [v for v in no_cut if v["hand_size"] == GIN_HAND_SIZE]
    r500 = [v for v in no_cut if v["hand_size"] != GIN_HAND_SIZE]
    assert {(len(v["seats"]), v["decks"], v["hand_size"]) for v in r500} == {
        (4, 1, 7),
        (6, 2, 7),
        (3, 1, 13),
    }
    for v in r500:  # the seat after the dealer first, one card at a time; the upcard; the stock
        exp, n, size = v["expected"], len(v["seats"]), v["hand_size"]
        assert (
            exp["wild_cut"] is None and exp["first_open"]["index"] == exp["order_indices"][n * size]
        )
        assert exp["stock_top"]["index"] == exp["order_indices"][n * size + 1]
        assert exp["stock_size"] == 52 * v["decks"] - n * size - 1 >= 12
        assert (
            exp["hands"][0]["seat"]
            == sorted(v["seats"])[(sorted(v["seats"]).index(v["dealer"]) + 1) % n]
        )
    assert {(v["decks"], v["printed_jokers"], v["hand_size"]) for v in gin} == {
        (GIN_SHOE.decks, GIN_SHOE.printed_jokers, GIN_HAND_SIZE)
    }
    assert {v["dealer"] for v in gin} == {0, 1}
    for v in gin:  # no cut: the upcard is the card after the hands, the stock the rest
        exp = v["expected"]
        assert exp["wild_cut"] is None and exp["wild_rank"] is None
        assert exp["first_open"]["index"] == exp["order_indices"][2 * GIN_HAND_SIZE]
        assert exp["stock_top"]["index"] == exp["order_indices"][2 * GIN_HAND_SIZE + 1]
        assert exp["stock_size"] == GIN_SHOE.size - 2 * GIN_HAND_SIZE - 1
        assert exp["hands"][0]["seat"] != v["dealer"]  # the non-dealer is dealt first


@pytest.mark.parametrize("v", vectors()["deals"], ids=lambda v: v["name"])
def test_python_deal_matches_the_vector(v: dict[str, Any]) -> None:
    shoe = Shoe(v["decks"], v["printed_jokers"])
    inp = shuffle_inputs(v)
    d = deal(inp, shoe, v["seats"], v["dealer"], v["hand_size"], deal_shape(v))
    exp = v["expected"]
    assert commitment(inp.server_seed) == exp["commitment_hex"]
    assert inp.hand_key.hex() == exp["hand_key_hex"]
    assert list(d.order) == exp["order_indices"]
    assert [shoe.index_to_card(i).face for i in d.order] == exp["order_cards"]
    assert [(h.seat, [shoe.card_to_index(c) for c in h.cards]) for h in d.hands] == [
        (h["seat"], h["indices"]) for h in exp["hands"]
    ]
    cut, upcard = exp["wild_cut"], exp["first_open"]
    assert (d.wild_cut is None) == (cut is None) and (d.first_open is None) == (upcard is None)
    if d.wild_cut is not None:
        assert shoe.card_to_index(d.wild_cut) == cut["index"]
    if d.first_open is not None:
        assert shoe.card_to_index(d.first_open) == upcard["index"]
    assert shoe.card_to_index(d.stock[0]) == exp["stock_top"]["index"]
    assert len(d.stock) == exp["stock_size"]


@pytest.mark.parametrize("v", vectors()["reshuffles"], ids=lambda v: v["name"])
def test_python_reshuffle_matches_the_vector(v: dict[str, Any]) -> None:
    shoe = Shoe(v["decks"], v["printed_jokers"])
    pile = [shoe.index_to_card(i) for i in v["pile_indices"]]
    new_stock = reshuffle(shuffle_inputs(v), shoe, pile, v["number"])
    assert [shoe.card_to_index(c) for c in new_stock] == v["expected"]["order_indices"]


def node_verify(vectors_file: Path) -> subprocess.CompletedProcess[str]:
    """``node web/verify/cli.mjs --vectors vectors_file``: its exit status and output."""
    return subprocess.run(
        [node(), str(VERIFY_JS), "--vectors", str(vectors_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.integration
def test_node_recomputes_every_vector() -> None:
    result = node_verify(VECTORS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "13 vectors, 0 mismatches" in result.stdout


@pytest.mark.integration
def test_node_reports_a_tampered_vector(tmp_path: Path) -> None:
    data = vectors()
    order = data["deals"][0]["expected"]["order_indices"]
    order[0], order[1] = order[1], order[0]
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data), encoding="utf-8")
    result = node_verify(tampered)
    assert result.returncode == 1
    assert "MISMATCH deal six-seats-all-seeds: order_indices differs" in result.stderr


@pytest.mark.integration
def test_node_reports_a_tampered_gin_upcard(tmp_path: Path) -> None:
    data = vectors()
    gin = next(v for v in data["deals"] if not v["deal_shape"]["wild_cut"])
    gin["expected"]["first_open"] = gin["expected"]["stock_top"]
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data), encoding="utf-8")
    result = node_verify(tampered)
    assert result.returncode == 1
    assert f"MISMATCH deal {gin['name']}: first_open differs" in result.stderr
