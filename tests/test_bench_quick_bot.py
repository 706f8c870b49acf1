"""The benchmarks' quick Indian strategy plays legal, complete hands with the solver once a turn:
it declares exactly when its 14 cards hold a valid show (never with the pile's card face down),
discards a loose card and never the pile's, drops only hopeless first hands, and a table of four
quick bots ends its hands with valid declares."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from rummy_ops.bots.strategy import BotBrain
from rummy_rules.cards import Card, Rank, parse_card, parse_cards
from rummy_rules.deck import Shoe
from rummy_rules.events import DrawSource
from rummy_rules.indian import INDIAN_POINTS, Declared, PlayerDropped
from rummy_rules.indian import bot as indian_bot
from rummy_rules.indian.arrangement import best_arrangement, valid_discards
from rummy_rules.indian.bot import IndianBot
from rummy_rules.melds import DEFAULT_MELD_OPTIONS, MeldOptions
from rummy_rules.wild import WildRank
from rummy_testing.bot_hands import play_hand

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from quick_bot import QuickIndianBot  # noqa: E402  (bench/ is no package)

SHOE = Shoe(decks=2, printed_jokers=2)
OPTIONS = MeldOptions(jokers_only_group_is_sequence=True)
#: Four melds (a pure sequence, a second sequence, a set, a sequence) and a loose 4C.
SHOW = "2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD AD 4C"


def test_it_declares_a_valid_show_laying_down_the_loose_card() -> None:
    quick = QuickIndianBot()
    assert quick.declaration(parse_cards(SHOW), None, None, OPTIONS) == parse_card("4C")


def test_it_never_lays_down_the_card_just_taken_from_the_pile() -> None:
    hand = parse_cards(SHOW)
    taken = hand[-1]  # 4C, the only card whose discard leaves a show
    assert QuickIndianBot().declaration(hand, None, taken, OPTIONS) is None


def test_its_declares_agree_with_the_solver_s_valid_discards_on_hands_near_a_show() -> None:
    """Shows with one card swapped for a random one (some still shows, most not), and random
    hands: a face-down card exactly when the solver finds a valid discard other than the pile's."""
    rng = random.Random(19)
    show = parse_cards(SHOW)
    cards = list(SHOE.cards)
    hands = []
    for _ in range(150):
        near = list(show)
        near[rng.randrange(14)] = rng.choice([c for c in cards if c not in near])
        hands.append(near)
        hands.append(rng.sample(cards, 14))
    for hand in hands:
        wild = rng.choice([None, Rank.TWO, Rank.NINE])
        taken = rng.choice([None, hand[0]])
        found = QuickIndianBot().declaration(hand, wild, taken, OPTIONS)
        expected = [c for c in valid_discards(hand, wild, OPTIONS) if c != taken]
        assert (found is None) == (not expected), hand
        if found is not None:
            assert found in expected


def test_it_discards_a_loose_card_and_never_the_pile_s() -> None:
    rng = random.Random(7)
    cards = list(SHOE.cards)
    for _ in range(100):
        hand = rng.sample(cards, 14)
        taken = hand[-1]
        card = QuickIndianBot().choose_discard(hand, Rank.FIVE, taken, OPTIONS)
        assert card != taken and card in hand
        loose = [c for c in best_arrangement(hand, Rank.FIVE, OPTIONS).deadwood if c != taken]
        if loose:
            assert card in loose


def test_it_asks_the_solver_once_a_turn_when_no_show_is_near() -> None:
    quick = QuickIndianBot()
    hand = parse_cards("2H 5H 9H KH 3S 7S JS 4C 8C QC 6D 10D AD 2C")  # nothing melds
    assert quick.declaration(hand, None, None, OPTIONS) is None
    quick.choose_discard(hand, None, None, OPTIONS)
    assert quick.solver_calls == 1


def test_it_takes_the_pile_card_making_a_set_or_a_pure_sequence_and_else_the_stock() -> None:
    quick = QuickIndianBot()
    hand = parse_cards("9C 9D 2H 3H 6S KD 4C 7D JS QH 5C 8H 10S")
    assert quick.choose_draw(hand, parse_card("9H"), None, OPTIONS) is DrawSource.DISCARD_PILE
    assert quick.choose_draw(hand, parse_card("4H"), None, OPTIONS) is DrawSource.DISCARD_PILE
    assert quick.choose_draw(hand, parse_card("JK"), None, OPTIONS) is DrawSource.DISCARD_PILE
    assert quick.choose_draw(hand, parse_card("2S"), None, OPTIONS) is DrawSource.STOCK
    assert quick.choose_draw(hand, None, None, OPTIONS) is DrawSource.STOCK


def test_a_first_hand_is_hopeless_as_the_variant_s_bot_judges_it_without_the_solver() -> None:
    rng = random.Random(3)
    cards = [c for c in SHOE.cards if not c.is_printed_joker]
    for _ in range(300):
        hand = rng.sample(cards, 13)
        assert QuickIndianBot().is_hopeless(hand, None, OPTIONS) == indian_bot.is_hopeless(
            hand, None, OPTIONS
        )


def _deal_and_play(seed: int) -> tuple[str, list[Card], WildRank]:
    """Four quick bots play one hand through the rules (their moves among the variant's
    ``legal_commands``): ("declare", the 13 cards shown, wild) for a valid declare, ("drops",
    ...) when all but one dropped, ("other", ...) otherwise."""
    rules = INDIAN_POINTS.house_rule_set(4, 100, 1000)
    brains = {
        s: BotBrain(seed=seed * 10 + s, strategy=IndianBot(QuickIndianBot())) for s in range(4)
    }
    hand = play_hand(INDIAN_POINTS, rules, brains, random.Random(seed).randbytes(32))
    assert INDIAN_POINTS.is_over(hand.state)
    declared = [e for e in hand.events if isinstance(e, Declared)]
    if declared:
        return "declare", list(declared[0].shown), hand.state.wild_rank
    if sum(isinstance(e, PlayerDropped) for e in hand.events) == 3:
        return "drops", [], hand.state.wild_rank
    return "other", [], hand.state.wild_rank


def test_a_table_of_quick_bots_ends_its_hands_with_valid_declares() -> None:
    endings = [_deal_and_play(seed) for seed in range(12)]
    assert all(how != "other" for how, _, _ in endings)
    declares = [(hand, wild) for how, hand, wild in endings if how == "declare"]
    assert len(declares) >= 10
    for hand, wild in declares:
        assert best_arrangement(hand, wild, DEFAULT_MELD_OPTIONS).valid
