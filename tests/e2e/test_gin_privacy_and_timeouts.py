"""Gin through the five services: what each seat's WatchTable stream carries, and a seat that
stops acting (house plan "Gin family": Views, Timeouts; docs/rules/gin.md#views, #timeouts).

- Privacy: two players play Gin Rummy hands greedily by their views' legal moves until one
  knocks; every view a seat (or an outsider following the table) received before the hand's
  result carries only its own cards and public ones (the pile, the knock's melds and deadwood):
  never the other hand, during the knock and its lay-offs too, and never the knocker's face-down
  card; with the result both hands, the face-down card and the lay-offs are public.
- Timeouts: at a gin game to 100 (the missed-turns forfeit on) one seat never acts. The clock
  times its turns out: at the first-turn offer a pass, at a draw turn a draw from the stock and
  the discard of its highest deadwood card (never a knock), and the third miss in a row forfeits
  the hand, so the seat loses the game at the cap: it pays cap x point value, the other receives
  that less the commission.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gpb
from rummy.gin.v1 import rules_pb2 as gin_rules_pb
from rummy.gin.v1 import view_pb2 as gin_view_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.cards import Card
from rummy_rules.gin.arrangement import best_arrangement, card_value
from rummy_rules.gin.rules import GIN_SHOE
from rummy_testing.match_options import gin_game_to
from rummy_testing.players import STOCK, Operator, Player, Table, cards_in, rule_set

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any

ENDED = (api.HAND_PHASE_ENDED, api.HAND_PHASE_ABORTED)
PLAYING = api.HAND_PHASE_PLAYING


Predicate = Callable[[api.PlayerView], bool]


def in_hand(hand_id: str, *phases: int) -> Predicate:
    """A view of hand ``hand_id`` in one of ``phases``."""
    return lambda v: v.hand_id == hand_id and v.phase in phases


def caught_up(seen: api.PlayerView) -> Predicate:
    """A view at least as recent as ``seen`` (the stream's version)."""
    return lambda v: v.stream_version >= seen.stream_version


def moved_on(old: api.PlayerView) -> Predicate:
    """A view after ``old``'s move: the hand over, a draw made or the turn passed."""
    return lambda v: v.phase in ENDED or (v.turn_no, v.has_drawn) != (old.turn_no, old.has_drawn)


def turn_after(hand_id: str, turn_no: int) -> Predicate:
    """A view of hand ``hand_id`` over, or at a turn after ``turn_no``."""
    return lambda v: (
        v.hand_id == hand_id and (v.phase in ENDED or (v.phase == PLAYING and v.turn_no > turn_no))
    )


def gin_rules(turn_seconds: int) -> cards_pb2.RuleSet:
    """Gin Rummy (big gin and the missed-turns forfeit on), with the given turn seconds (the
    services' fast clock divides them), a short seed window and start delay."""
    rules = rule_set(turn_seconds=turn_seconds, seed_window_seconds=3, start_delay_seconds=1)
    rules.variant = "gin"
    rules.other_variant.Pack(gin_rules_pb.GinOptions(big_gin=True, missed_turns_forfeit=True))
    return rules


def gin_part(view: api.PlayerView) -> gin_view_pb.GinView:
    out = gin_view_pb.GinView()
    if view.HasField("variant_view"):
        assert view.variant_view.Unpack(out), view.variant_view.type_url
    return out


def seated(table: Table, *names: str, grant: int = 10_000) -> list[Player]:
    players = [table.player(n, grant=grant) for n in names]
    for p in players:
        p.shoe = GIN_SHOE
        p.take_seat()
    return players


def mine(view: api.PlayerView) -> bool:
    return view.HasField("my_seat") and view.turn_seat == view.my_seat


def play_one_move(player: Player, view: api.PlayerView) -> None:
    """The seat's move in ``view``: a knock as soon as one is legal (one leaving deadwood, so
    the defender may lay off, when there is such), else pass the offer, draw the stock, or
    discard the card leaving the least deadwood."""
    knocks: list[gpb.Knock] = []
    discards: list[cards_pb2.Card] = []
    passes = draws = False
    for move in view.legal_moves:
        arm = move.WhichOneof("move")
        if arm == "command":
            knock = gpb.Knock()
            if move.command.Unpack(knock):
                knocks.append(knock)
            elif move.command.Is(gpb.PassUpcard.DESCRIPTOR):
                passes = True
        elif arm == "draw":
            draws = draws or move.draw == STOCK
        elif arm == "discard":
            discards.append(move.discard)
    hand = [player.card(c) for c in view.my_cards]

    def left(card: cards_pb2.Card) -> int:
        gone = player.card(card)
        return best_arrangement(tuple(c for c in hand if c != gone)).deadwood

    if knocks:
        knock = max(knocks, key=lambda k: left(k.face_down))
        player.play(knock, hand_id=view.hand_id, turn_no=view.turn_no)
    elif passes:
        player.play(gpb.PassUpcard(), hand_id=view.hand_id, turn_no=view.turn_no)
    elif draws:
        player.draw(STOCK, turn_no=view.turn_no)
    else:
        player.discard(min(discards, key=left), turn_no=view.turn_no)


def public_in(view: api.PlayerView) -> set[int]:
    """The cards a view may carry: the viewer's own, the pile, a knock's melds and deadwood."""
    out = {c.index for c in view.my_cards} | {c.index for c in view.discard_pile}
    knock = gin_part(view).knock
    out |= {c.index for m in knock.melds for c in m.cards} | {c.index for c in knock.deadwood_cards}
    if knock.HasField("face_down") and view.HasField("my_seat") and knock.seat == view.my_seat:
        out.add(knock.face_down.index)
    return out


def test_a_gin_seat_never_sees_the_other_hand_or_the_face_down_card_before_the_result(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 2, 1, 0, gin_rules(turn_seconds=120))
    try:
        a, b = seated(table, "ginpriva", "ginprivb")
        outsider = table.player("ginprivout")  # follows the table, never seated
        done: set[str] = set()
        knocked: api.PlayerView | None = None
        for _ in range(6):  # a wall redeals: play hands until one ends with a knock
            view = a.wait(
                lambda v: bool(v.hand_id) and v.hand_id not in done and v.phase not in ENDED,
                timeout=60,
                what="a new hand",
            )
            hand_id = view.hand_id
            done.add(hand_id)
            while True:
                view = a.wait(
                    in_hand(hand_id, *ENDED, PLAYING),
                    timeout=60,
                    what=f"hand {hand_id} played",
                )
                if view.phase in ENDED:
                    break
                player = next(p for p in (a, b) if p.view.my_seat == view.turn_seat)
                before = player.wait(
                    caught_up(view),
                    timeout=60,
                    what="the on-turn seat's view",
                )
                play_one_move(player, before)
                moved = player.wait(
                    moved_on(before),
                    timeout=60,
                    what="the move applied",
                )
                for p in (a, b):  # both streams caught up before the next move is chosen
                    p.wait(caught_up(moved), timeout=60)
            if gin_part(view).HasField("score"):
                knocked = view
                break
        assert knocked is not None, "no hand of six ended with a knock"
        hand_id = knocked.hand_id
        for p in (a, b, outsider):  # every stream reaches the result
            p.wait(in_hand(hand_id, api.HAND_PHASE_ENDED))

        result = knocked.result
        hands = {r.seat: {c.index for c in r.cards} for r in result.results}
        assert {len(cards) for cards in hands.values()} <= {10, 11} and len(hands) == 2
        gin = gin_part(knocked)
        score, knock = gin.score, gin.knock
        assert score.knocker_seat == knock.seat and knock.outcome in ("knock", "gin")
        face_down = knock.face_down.index
        defender = score.defender_seat
        assert {c.index for c in score.defender_cards} == hands[defender]

        seat_of = {p: p.view.my_seat for p in (a, b)}
        seen_knock_only = checked = 0
        for p in (a, b, outsider):
            other = hands[1 - seat_of[p]] if p in seat_of else hands[0] | hands[1]
            for v in p.views:
                if v.hand_id != hand_id or v.phase in ENDED:
                    continue
                carried = cards_in(v)
                checked += 1
                # only its own cards and public ones, none of the other hand but what is public
                assert carried <= public_in(v), (p.account_id, carried - public_in(v))
                assert not (carried & other) - public_in(v)
                part = gin_part(v)
                if part.HasField("knock"):
                    seen_knock_only += 1
                    # the knock is public, the lay-offs not yet made known, the hands hidden
                    assert not part.HasField("score")
                    if p in seat_of and seat_of[p] == knock.seat:
                        assert part.knock.face_down.index == face_down
                        assert not carried & hands[defender]
                    else:
                        assert not part.knock.HasField("face_down")
                        assert face_down not in carried
        assert checked > 10  # the streams carried the hand's turns (a stream may skip some)
        # with the result: both hands, the face-down card and the lay-offs, to every seat
        for p in (a, b, outsider):
            last = p.wait(in_hand(hand_id, api.HAND_PHASE_ENDED))
            final = gin_part(last)
            assert final.knock.face_down.index == face_down
            assert list(final.score.layoffs) == list(score.layoffs)
            assert {r.seat: {c.index for c in r.cards} for r in last.result.results} == hands
        print(
            f"gin privacy: {len(done)} hands, {checked} views checked, the last a"
            f" {score.outcome} with {len(score.layoffs)} lay-off(s); views of the knock before"
            f" the score: {seen_knock_only}"
        )
    finally:
        table.close()


def _highest_deadwood(cards: list[Card]) -> set[Card]:
    """The cards a timed-out turn may discard from ``cards`` (eleven): the deadwood cards of
    the best arrangement of the highest value."""
    loose = best_arrangement(tuple(cards)).loose
    top = max(card_value(c) for c in loose)
    return {c for c in loose if card_value(c) == top}


def test_a_gin_seat_that_stops_acting_is_played_by_the_clock_and_loses_the_game_at_the_cap(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    cap, point_value, bps = 40, 3, 1000
    options = gin_game_to(
        target=100, games=1, point_value_hundredths=point_value, max_game_points=cap
    )
    table = Table(operator, rummy_stack.endpoints.table, 2, 0, bps, gin_rules(40), options)
    # Each seat holds exactly one game's stake (cap x point value): the next match, which the
    # table starts while both still sit, cannot hold the sleeper's stake once it has paid, so it
    # is aborted and moves nothing; the balances read below are this match's alone.
    grant = cap * point_value
    try:
        active, sleeper = seated(table, "ginawake", "ginasleep", grant=grant)
        view = active.wait(
            lambda v: v.phase == api.HAND_PHASE_PLAYING, timeout=60, what="the first hand"
        )
        hand_id = view.hand_id
        asleep = sleeper.view.my_seat
        awake = active.view.my_seat
        assert asleep != awake
        upcard = view.discard_pile[-1].index
        offers_timed_out = draws_timed_out = 0
        auto_discards: list[int] = []
        after = 0
        while True:
            view = active.wait(
                turn_after(hand_id, after),
                timeout=60,
                what=f"the turn after {after}",
            )
            if view.phase in ENDED:
                break
            after = view.turn_no
            if view.turn_seat == asleep:
                misses = {s.seat: s.missed_turns_in_a_row for s in view.seats}[asleep]
                offer = gin_part(view).first_turn_offer
                pile = len(view.discard_pile)
                nxt = active.wait(
                    turn_after(hand_id, view.turn_no),
                    timeout=60,
                    what="the sleeper's turn timed out",
                )
                if nxt.phase in ENDED:
                    break
                seat = {s.seat: s for s in nxt.seats}[asleep]
                assert seat.missed_turns_in_a_row == misses + 1
                assert seat.card_count == 10  # no knock, no card kept
                if offer:  # a timed-out offer is a pass: the upcard stays on the pile
                    offers_timed_out += 1
                    assert [c.index for c in nxt.discard_pile][-1] == upcard
                    assert len(nxt.discard_pile) == pile
                else:  # drawn from the stock, a card discarded
                    draws_timed_out += 1
                    assert nxt.stock_count == view.stock_count - 1
                    assert len(nxt.discard_pile) == pile + 1
                    auto_discards.append(nxt.discard_pile[-1].index)
                after = nxt.turn_no - 1
                continue
            # the awake seat: pass the offer, else draw from the stock and discard that card
            if gin_part(view).first_turn_offer:
                active.play(gpb.PassUpcard(), hand_id=hand_id, turn_no=view.turn_no)
            else:
                drawn = active.draw(STOCK, turn_no=view.turn_no)
                active.discard(drawn.card, turn_no=view.turn_no)

        ended = active.wait(
            lambda v: v.hand_id == hand_id and v.phase == api.HAND_PHASE_ENDED, timeout=60
        )
        outcome = {r.seat: r.outcome for r in ended.result.results}
        assert outcome == {asleep: "timed_out", awake: "won"}
        assert gin_part(ended).forfeited and not gin_part(ended).HasField("knock")
        seat = {s.seat: s for s in ended.seats}[asleep]
        assert seat.missed_turns_in_a_row == 3
        # whoever deals, the sleeper's offer comes first, then one draw turn; the third miss
        # forfeits the hand, unplayed
        assert (offers_timed_out, draws_timed_out) == (1, 1)
        # the clock's discard was a highest deadwood card of its eleven cards
        final = [sleeper.card(c) for r in ended.result.results if r.seat == asleep for c in r.cards]
        (discarded,) = auto_discards
        card = GIN_SHOE.index_to_card(discarded)
        assert card in _highest_deadwood([*final, card])

        # the game is lost at the cap: the sleeper pays cap x point value, less the commission
        # to the other seat; the sheet says so
        over = active.wait(lambda v: v.match.HasField("ended"), timeout=60, what="the match's end")
        (sheet,) = over.match.sheets
        lines = {s.seat: s for s in sheet.seats}
        assert lines[asleep].lost_at_cap and not lines[awake].lost_at_cap
        assert sheet.HasField("winner") and sheet.winner == awake and not sheet.running
        paid = cap * point_value
        cut = paid * bps // 10_000
        balances = operator.settled_balances([active.account_id, sleeper.account_id])
        assert balances == {
            active.account_id: grant + paid - cut,
            sleeper.account_id: grant - paid,
        }
        print(
            f"gin timeouts: {offers_timed_out} offer(s) and {draws_timed_out} draw turn(s)"
            f" timed out, then the forfeit; paid {paid}, commission {cut}"
        )
    finally:
        table.close()
