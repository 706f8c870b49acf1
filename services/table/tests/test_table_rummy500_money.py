"""A match to N of Rummy 500 whose every number is worked by hand (issue 29, "money checked against
hand-worked numbers"): two fixed deals played through the table's public API, each round's
scores, the running totals and the game's settlement written below as literal numbers with their
arithmetic, and the table's own events (the rules' scores, the race-to format's totals and game
stakes) must say the same.

The five-service end-to-end test (``tests/e2e/test_rummy500_match_end_to_end.py``) cannot fix
its deals: the fairness service's seeds make every deal, and its hand ids are fresh every run, so
its expected money is the planner's. Here the dealer's deal is fed as given (the table takes the
deal it is sent), so the deals, and with them every figure, are the same every run.

Card values (``docs/rules/rummy500.md#scores``): an ace 15, a K, Q, J or 10 10, any other its
rank. Round score = cards melded and laid off - cards left in hand. The money
(``docs/rules/formats.md#race-to``): race to 90, 0.10 a point (10 hundredths), each loser's loss
capped at 200 points, commission 5% (500 bps) of what the losers pay.
"""

from __future__ import annotations

import table_calls
from match_world import hold_money, last, match_payloads, next_step, seat_all
from test_table_service import table_events
from world import World

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as mpb
from rummy.rummy500.v1 import events_pb2 as rpb
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api

ACCOUNTS = ("ann", "bob", "cat")
TARGET, POINT, CAP, BPS = 90, 10, 200, 500


def _deal(world: World, table_id: str, hands: tuple[str, str, str], upcard: str, stock: str) -> int:
    """The current hand's money, seeds and the dealer's deal (``World.prepare_fixed``): ``hands``
    in playing order (the seat after the dealer first), the pile's first card, the top of the
    stock (the rest of the deck follows). Returns the first seat to play."""
    view = world.view(table_id, None)
    order = [(view.dealer_seat + 1 + k) % 3 for k in range(3)]
    given = dict(zip(order, hands, strict=True))
    world.prepare_fixed(table_id, view.hand_id, given, "", upcard, stock)
    return order[0]


class _Seat:
    """The seat on turn, playing through the table's handlers (what the gRPC servicer calls)."""

    def __init__(self, world: World, table_id: str) -> None:
        self.world, self.table_id = world, table_id
        view = world.view(table_id, None)
        self.seat = view.turn_seat
        self.account = ACCOUNTS[self.seat]

    def _view(self) -> api.PlayerView:
        return self.world.view(self.table_id, self.account)

    def _card(self, face: str) -> cards_pb2.Card:
        return next(c for c in self._view().my_cards if c.face == face)

    def draw(self) -> None:
        request = self.world.turn_request(
            api.DrawCardRequest, self.table_id, self._view(), source=pb.DRAW_SOURCE_STOCK
        )
        table_calls.draw(self.world.app, self.account, request)

    def discard(self, face: str) -> None:
        request = self.world.turn_request(
            api.DiscardCardRequest, self.table_id, self._view(), card=self._card(face)
        )
        table_calls.discard(self.world.app, self.account, request)

    def _play(self, command: rpb.Meld | rpb.LayOff) -> None:
        request = self.world.turn_request(api.PlayRequest, self.table_id, self._view())
        request.command.Pack(command)
        table_calls.play(self.world.app, self.account, request)

    def meld(self, *groups: str) -> None:
        self._play(
            rpb.Meld(
                groups=[
                    cards_pb2.CardGroup(cards=[self._card(f) for f in g.split()]) for g in groups
                ]
            )
        )

    def lay_off(self, face: str, meld_id: int) -> None:
        self._play(rpb.LayOff(card=self._card(face), meld_id=meld_id))


def _round_end(world: World, table_id: str) -> dict[int, tuple[int, int, int]]:
    """The last round's scores as the table recorded them: seat -> (table, hand, score)."""
    end = last(world, table_id, rpb.Rummy500RoundEnded)
    return {s.seat: (s.table_points, s.hand_points, s.score) for s in end.scores}


def test_a_race_to_90_of_two_fixed_rounds_scores_and_settles_as_worked_by_hand() -> None:
    world = World()
    match = mpb.MatchOptions(
        race_to=mpb.RaceToOptions(target=TARGET, point_value_hundredths=POINT, max_game_points=CAP)
    )
    request = api.OpenTableRequest(
        client_request_id=world.request_id(),
        seat_count=3,
        commission_bps=BPS,
        rule_set=cards_pb2.RuleSet(variant="rummy500", start_delay_seconds=0),
        match=match,
    )
    table_id = table_calls.open_table(world.app, "op", request)
    seat_all(world, table_id, ACCOUNTS)
    next_step(world, table_id)  # the match and its game stakes: 200 points x 10 = 2,000 each
    stakes = [p for p in match_payloads(world, table_id) if isinstance(p, mpb.MoneyReserved)]
    assert [(p.purpose, p.amount_hundredths) for p in stakes] == [("stake", 2000)] * 3
    hold_money(world, table_id, "stake", 1)
    next_step(world, table_id)

    # Round 1. A plays first, then B, then C (A, B, C: the seats after the dealer, in turn).
    a = _deal(
        world,
        table_id,
        ("7C 8C 9C 4D 4H 4S KH", "JC AS AD 5H 6S 9D QD", "KS KD 8H 3H 3C 6D 7S"),
        upcard="2C",
        stock="10C 2S 5C 4C",
    )
    b, c = (a + 1) % 3, (a + 2) % 3
    turn = _Seat(world, table_id)
    assert turn.seat == a
    turn.draw()  # 10C
    turn.meld("7C 8C 9C 10C")  # meld 1, A's run
    turn.discard("KH")
    turn = _Seat(world, table_id)
    turn.draw()  # 2S
    turn.lay_off("JC", 1)  # B lays off onto A's run: scored for B
    turn.discard("QD")
    turn = _Seat(world, table_id)
    turn.draw()  # 5C
    turn.discard("8H")
    turn = _Seat(world, table_id)
    turn.draw()  # 4C
    turn.meld("4C 4D 4H 4S")  # A's last cards: out without a discard
    # A: melded 7+8+9+10 = 34 and 4+4+4+4 = 16, 50 on the table, nothing in hand: 50.
    # B: laid off JC 10; holds AS AD 5H 6S 9D 2S = 15+15+5+6+9+2 = 52: 10 - 52 = -42.
    # C: nothing on the table; holds KS KD 3H 3C 6D 7S 5C = 10+10+3+3+6+7+5 = 44: -44.
    assert _round_end(world, table_id) == {a: (50, 0, 50), b: (10, 52, -42), c: (0, 44, -44)}
    scored = last(world, table_id, mpb.DealScored)
    assert {t.seat: t.points for t in scored.totals} == {a: 50, b: -42, c: -44}  # below 90
    next_step(world, table_id)

    # Round 2: the button moved, so B plays first, then C, then A.
    assert (
        _deal(
            world,
            table_id,
            ("AH AS KD QC JS 5D 6H", "2H 3S 5C 6C 8D 9S 10H", "7C 8C 9C 4D 4H 4S KH"),
            upcard="2C",
            stock="9H KC 10C",
        )
        == b
    )
    for discard in ("9H", "KC"):  # B and C draw and throw the card drawn back
        turn = _Seat(world, table_id)
        turn.draw()
        turn.discard(discard)
    turn = _Seat(world, table_id)
    assert turn.seat == a
    turn.draw()  # 10C
    turn.meld("7C 8C 9C 10C", "4D 4H 4S")
    turn.discard("KH")  # out with a discard
    # A: 34 + 4+4+4 = 46. B: holds AH AS KD QC JS 5D 6H = 15+15+10+10+10+5+6 = 71: -71.
    # C: holds 2H 3S 5C 6C 8D 9S 10H = 2+3+5+6+8+9+10 = 43: -43.
    assert _round_end(world, table_id) == {a: (46, 0, 46), b: (0, 71, -71), c: (0, 43, -43)}
    # Totals: A 50 + 46 = 96 (over 90: A wins), B -42 - 71 = -113, C -44 - 43 = -87.
    game = last(world, table_id, mpb.GameEnded)
    assert game.winner == a
    assert {t.seat: t.points for t in game.totals} == {a: 96, b: -113, c: -87}
    # B pays min(96 - (-113), 200) = min(209, 200) = 200 points x 10 = 2,000 (the cap);
    # C pays min(96 - (-87), 200) = 183 points x 10 = 1,830; paid 2,000 + 1,830 = 3,830;
    # commission floor(3,830 x 5%) = floor(191.5) = 191; A receives 3,830 - 191 = 3,639.
    money = game.settlement
    assert {ln.seat: (ln.held_hundredths, ln.amount_hundredths) for ln in money.lines} == {
        a: (2000, 3639),
        b: (2000, -2000),
        c: (2000, -1830),
    }
    assert money.commission_hundredths == 191
    assert [p for p in table_events(world, table_id) if isinstance(p, mpb.MatchEnded)]
