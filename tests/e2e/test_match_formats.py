"""The match formats (issue 16) through the five real services: the table hosting the format,
the ledger holding, settling and releasing its money, over the public gRPC API only (and the
ledger's own events on Kafka for its journal lines).

Every deal's outcome is scripted without luck: a deal ends when every other seat drops (first
drop 20/25, middle drop 40/50 by format) or leaves (the middle drop), so each running total,
chip count and the money below is worked by hand in the comments.

Money is in hundredths of a House Token; the commission is floor(pool x bps / 10000).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import grpc

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as mpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS
from rummy_testing.players import (
    ABSENT,
    FIRST_DROP,
    LEAVE,
    MIDDLE_DROP,
    WIN,
    Operator,
    Player,
    Table,
    next_hand,
    play_deal,
    rejoin_after_elimination,
    rule_set,
)
from rummy_testing.stacks import RunningStack
from toy_variant import TOY_NAME, toy_pb2

HOUSE = "house:commission"
GRANT = 5000
#: Seconds as the table sees them (the e2e clock runs 10x): a 3 s start delay between deals to
#: answer a rejoin offer or ask to split, a 1 s seed window.
RULES = rule_set(turn_seconds=300, seed_window_seconds=10, start_delay_seconds=30)


def seated(table: Table, *names: str) -> list[Player]:
    """A player per name, each granted ``GRANT`` and seated, in order."""
    players = [table.player(name, grant=GRANT) for name in names]
    for p in players:
        p.take_seat()
    return players


def assert_paid(
    operator: Operator,
    settled: ledger_pb.MatchSettled,
    net: dict[str, int],
    commission: int,
    house_before: int,
) -> None:
    """The journal's lines are ``net`` by account and ``commission`` to the house; every
    account's balance is ``GRANT`` plus its net, nothing held; the house gained ``commission``."""
    assert journal(settled) == {**net, HOUSE: commission}
    balances = operator.settled_balances(list(net))
    assert balances == {account: GRANT + amount for account, amount in net.items()}
    assert operator.balance(HOUSE).balance_hundredths - house_before == commission


def seats_of(view: api.PlayerView) -> dict[str, mpb.MatchSeatView]:
    """The match's seats by account."""
    return {s.account_id: s for s in view.match.seats}


def totals(view: api.PlayerView) -> dict[str, int]:
    return {a: s.total for a, s in seats_of(view).items()}


def match_over(player: Player, timeout: float = 60.0) -> api.PlayerView:
    return player.wait(lambda v: v.match.HasField("ended"), timeout, "the match ended")


def match_settled(stack: RunningStack, table_id: str) -> ledger_pb.MatchSettled:
    """The ledger's MatchSettled of the table's (only) match."""
    return stack.match_settlements(table_id, timeout=30.0)[0]


def journal(settled: ledger_pb.MatchSettled) -> dict[str, int]:
    """Each account's net in the settlement's journal lines."""
    net: dict[str, int] = {}
    for line in settled.lines:
        net[line.account_id] = net.get(line.account_id, 0) + line.amount_hundredths
    return net


def test_a_pool_101_match_with_an_elimination_and_a_rejoin_pays_the_last_seat_left(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 777, commission 12.5% (so the commission rounds), rejoin on.
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=777, rejoin=True)
    )
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 1250, RULES, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b, c = seated(table, "poola", "poolb", "poolc")
        done: set[str] = set()
        # Deal 1: A wins, B first drop 20, C middle drop 40 -> A 0, B 20, C 40.
        # The match is held first: every entry (777) reserved.
        view = play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
        assert operator.balance(a.account_id).reserved_hundredths == 777
        view = a.wait(lambda v: v.match.deals_scored == 1)
        assert totals(view) == {a.account_id: 0, b.account_id: 20, c.account_id: 40}
        # Deal 2: the same -> A 0, B 40, C 80.
        play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
        # Deal 3: B wins, A first drop 20, C middle drop 40 -> A 20, B 40, C 120: C is out at
        # >= 101 and offered a rejoin at the highest total left + 1 = 41 (two others remain,
        # 41 <= 79).
        play_deal({b: WIN, a: FIRST_DROP, c: MIDDLE_DROP}, done)
        view = c.wait(lambda v: seats_of(v)[c.account_id].HasField("rejoin_total"))
        seat_c = seats_of(view)[c.account_id]
        assert (seat_c.status, seat_c.total, seat_c.rejoin_total) == ("eliminated", 120, 41)
        assert c.match_command(mpb.AcceptRejoin()).total == 41
        # C's second entry is held: 2 x 777.
        view = c.wait(lambda v: seats_of(v)[c.account_id].status == "in")
        assert totals(view) == {a.account_id: 20, b.account_id: 40, c.account_id: 41}
        # Deal 4: A wins, B middle 40, C middle 40 -> A 20, B 80, C 81.
        play_deal({a: WIN, b: MIDDLE_DROP, c: MIDDLE_DROP}, done)
        assert operator.balance(c.account_id).reserved_hundredths == 2 * 777
        # Deal 5: A wins, B middle 40 -> 120, C first drop 20 -> 101: both out at once, nobody
        # left to rejoin beside (one other remains): A is the last seat.
        play_deal({a: WIN, b: MIDDLE_DROP, c: FIRST_DROP}, done)
        view = match_over(a)
        assert totals(view) == {a.account_id: 20, b.account_id: 120, c.account_id: 101}
        ended = view.match.ended
        seat_a = seats_of(view)[a.account_id].seat
        assert (list(ended.winners), ended.reason) == ([seat_a], "last_left")
        # Pool 4 x 777 = 3108 (C paid twice); commission floor(3108 x 1250 / 10000) =
        # floor(388.5) = 388; A receives 3108 - 388 = 2720, its net 2720 - 777 = +1943;
        # B forfeits 777, C 1554. 1943 - 777 - 1554 + 388 = 0.
        s = ended.settlement
        assert (s.pool_hundredths, s.commission_hundredths) == (3108, 388)
        by_seat_amount = {line.seat: line.amount_hundredths for line in s.lines}
        seat = {p.account_id: seats_of(view)[p.account_id].seat for p in (a, b, c)}
        assert by_seat_amount == {
            seat[a.account_id]: 1943,
            seat[b.account_id]: -777,
            seat[c.account_id]: -1554,
        }
        settled = match_settled(rummy_stack, table.table_id)
        assert settled.commission_hundredths == 388
        assert journal(settled) == {
            a.account_id: 1943,
            b.account_id: -777,
            c.account_id: -1554,
            HOUSE: 388,
        }
        balances = operator.settled_balances([p.account_id for p in (a, b, c)])
        assert balances == {a.account_id: 6943, b.account_id: 4223, c.account_id: 3446}
        assert operator.balance(HOUSE).balance_hundredths - house_before == 388
    finally:
        table.close()


def test_a_deals_2_match_tied_after_two_deals_plays_a_tie_break_deal_and_pays_its_winner(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 1001, commission 10%.
    options = mpb.MatchOptions(deals=mpb.DealsOptions(deals=2, entry_fee_hundredths=1001))
    table = Table(operator, rummy_stack.endpoints.table, 2, 0, 1000, RULES, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b = seated(table, "dealsa", "dealsb")
        done: set[str] = set()

        def chips(v: api.PlayerView) -> dict[str, int]:
            return {x: s.chips for x, s in seats_of(v).items()}

        # Each seat starts with 80 x 2 = 160 chips; a loser pays its points to the winner.
        # Deal 1: A wins, B first drop 20 -> A 180, B 140.
        play_deal({a: WIN, b: FIRST_DROP}, done)
        view = a.wait(lambda v: v.match.deals_scored == 1)
        assert chips(view) == {a.account_id: 180, b.account_id: 140}
        assert view.match.deals_left == 1
        # Deal 2: B wins, A first drop 20 -> 160 each: a tie at the top after the last deal.
        play_deal({b: WIN, a: FIRST_DROP}, done)
        view = a.wait(lambda v: v.match.deals_scored == 2)
        assert chips(view) == {a.account_id: 160, b.account_id: 160}
        assert not view.match.HasField("ended")
        # Deal 3, the tie-break between both: A wins, B middle drop 40 -> A 200, B 120.
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        view = match_over(a)
        assert chips(view) == {a.account_id: 200, b.account_id: 120}
        ended = view.match.ended
        seat = {x: s.seat for x, s in seats_of(view).items()}
        assert (list(ended.winners), ended.reason) == ([seat[a.account_id]], "most_chips")
        # Pool 2 x 1001 = 2002; commission floor(2002 x 1000 / 10000) = floor(200.2) = 200;
        # A receives 2002 - 200 = 1802, its net +801; B forfeits 1001. 801 - 1001 + 200 = 0.
        s = ended.settlement
        assert (s.pool_hundredths, s.commission_hundredths) == (2002, 200)
        settled = match_settled(rummy_stack, table.table_id)
        assert journal(settled) == {a.account_id: 801, b.account_id: -1001, HOUSE: 200}
        balances = operator.settled_balances([a.account_id, b.account_id])
        assert balances == {a.account_id: 5801, b.account_id: 3999}
        assert operator.balance(HOUSE).balance_hundredths - house_before == 200
    finally:
        table.close()


def test_a_pool_201_split_shares_the_pool_less_commission_the_remainder_to_the_earliest_lowest_seat(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 1000, commission 10.07% (so the shared rest leaves a remainder hundredth).
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=201, entry_fee_hundredths=1000, split=True)
    )
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 1007, RULES, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b, c = seated(table, "splita", "splitb", "splitc")
        done: set[str] = set()
        # Deal 1 (201: drops 25 / 50): A wins, B first drop 25, C middle drop 50.
        play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
        # Deal 2: B wins, A first drop 25, C first drop 25 -> A 25, B 25, C 75.
        play_deal({b: WIN, a: FIRST_DROP, c: FIRST_DROP}, done)
        view = a.wait(lambda v: v.match.deals_scored == 2)
        assert totals(view) == {a.account_id: 25, b.account_id: 25, c.account_id: 75}
        # Every seat left asks to split before the next deal: the match ends at the last ask.
        for p in (a, b, c):
            p.match_command(mpb.RequestSplit())
        view = match_over(a)
        ended = view.match.ended
        seat = {x: s.seat for x, s in seats_of(view).items()}
        assert ended.reason == "split"
        assert sorted(ended.winners) == sorted(seat.values())
        # Pool 3 x 1000 = 3000; commission floor(3000 x 1007 / 10000) = floor(302.1) = 302;
        # shared 2698 = 3 x 899 + 1: the 1 hundredth goes to the lowest total (A and B, 25),
        # the tie to the earlier seat. Each line is its share less its entry 1000:
        # the earlier of A/B -100, the others -101; -100 - 101 - 101 + 302 = 0.
        early = min((a, b), key=lambda p: seat[p.account_id])
        late = b if early is a else a
        s = ended.settlement
        assert (s.pool_hundredths, s.commission_hundredths) == (3000, 302)
        expected = {early.account_id: -100, late.account_id: -101, c.account_id: -101}
        assert_paid(
            operator, match_settled(rummy_stack, table.table_id), expected, 302, house_before
        )
    finally:
        table.close()


def test_a_best_of_3_with_a_leave_mid_deal_and_a_deal_aborted_before_its_deal_pays_the_lowest_total(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 333, commission 7.5%; a 3 s seed window, so a seat can leave before the deal.
    options = mpb.MatchOptions(best_of=mpb.BestOfOptions(deals=3, entry_fee_hundredths=333))
    rules = rule_set(turn_seconds=300, seed_window_seconds=30, start_delay_seconds=30)
    table = Table(operator, rummy_stack.endpoints.table, 4, 0, 750, rules, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b, c, d = seated(table, "besta", "bestb", "bestc", "bestd")
        done: set[str] = set()
        # Deal 1: A wins, B first drop 20, C middle drop 40, D leaves the table mid-deal (the
        # middle drop, 40, then out of the match, forfeiting its entry).
        play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP, d: LEAVE}, done)
        view = a.wait(lambda v: v.match.deals_scored == 1)
        assert totals(view) == {
            a.account_id: 0,
            b.account_id: 20,
            c.account_id: 40,
            d.account_id: 40,
        }
        assert seats_of(view)[d.account_id].status == "left"
        # Deal 2's hand: C leaves while the seeds are being collected, before the deal: the
        # hand is aborted, the deal void (not counted), C out; deal 2 is dealt again to A, B.
        aborted = next_hand(a, done)
        done.add(aborted.hand_id)
        c.leave()
        view = a.wait(
            lambda v: v.hand_id == aborted.hand_id and v.phase == api.HAND_PHASE_ABORTED,
            what="the aborted deal",
        )
        view = a.wait(lambda v: seats_of(v)[c.account_id].status == "left")
        assert view.match.deals_scored == 1
        # Entries stay held across the voided deal.
        assert operator.balance(a.account_id).reserved_hundredths == 333
        # Deal 2: B wins, A first drop 20 -> A 20, B 20.
        play_deal({b: WIN, a: FIRST_DROP}, done)
        # Deal 3: A wins, B middle drop 40 -> A 20, B 60: A has the lowest total.
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        view = match_over(a)
        assert view.match.deals_scored == 3
        assert {x: totals(view)[x] for x in (a.account_id, b.account_id)} == {
            a.account_id: 20,
            b.account_id: 60,
        }
        ended = view.match.ended
        assert (list(ended.winners), ended.reason) == (
            [seats_of(view)[a.account_id].seat],
            "lowest_total",
        )
        # Pool 4 x 333 = 1332 (the leavers' entries stay in it); commission
        # floor(1332 x 750 / 10000) = floor(99.9) = 99; A receives 1332 - 99 = 1233, its net
        # +900; B, C and D forfeit 333 each. 900 - 999 + 99 = 0.
        s = ended.settlement
        assert (s.pool_hundredths, s.commission_hundredths) == (1332, 99)
        expected = {a.account_id: 900, b.account_id: -333, c.account_id: -333, d.account_id: -333}
        settled = match_settled(rummy_stack, table.table_id)
        assert_paid(operator, settled, expected, 99, house_before)
    finally:
        table.close()


def test_a_game_to_match_of_the_toy_variant_settles_each_game_at_the_capped_difference(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # The toy variant (a plug-in of the session's stack), 2 games to 10 points, 37 hundredths a
    # game point, a cap of 8 game points (296 reserved from each seat at each game's start),
    # commission 12.5%. Every deal the seat on turn knocks at once: the lowest card total wins
    # the deal and scores what the other is charged (min(difference, 25)). The cards are
    # dealt from the server's secret seed, so each game's totals are read from its GameEnded
    # and the money worked from them by the rule: the loser pays min(W - L, 8) x 37, the
    # commission is floor(paid x 1250 / 10000), the winner gets the rest.
    target, games, point_value, cap, bps = 10, 2, 37, 8, 1250
    rules = rule_set(turn_seconds=300, seed_window_seconds=10, start_delay_seconds=20)
    rules.variant = TOY_NAME
    rules.other_variant.Pack(toy_pb2.ToyOptions(max_turns=18))
    options = mpb.MatchOptions(
        game_to=mpb.GameToOptions(
            target=target, games=games, point_value_hundredths=point_value, max_game_points=cap
        )
    )
    table = Table(operator, rummy_stack.endpoints.table, 2, 0, bps, rules, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b = seated(table, "gamea", "gameb")
        done: set[str] = set()
        deals = 0
        while True:
            view = a.wait(
                lambda v: (
                    v.match.HasField("ended")
                    or (
                        v.hand_id not in done
                        and v.phase in (api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING)
                    )
                ),
                timeout=60,
                what="the next deal or the match's end",
            )
            if view.match.HasField("ended"):
                break
            assert deals < 60, "the games never reach their target"
            deals += 1
            hand_id = view.hand_id
            done.add(hand_id)
            # A game's stakes are held before its deals: cap x point value from each seat.
            assert operator.balance(a.account_id).reserved_hundredths == cap * point_value
            if view.phase == api.HAND_PHASE_SEEDING:
                for p in (a, b):  # a seat late for the window gets the empty seed
                    with contextlib.suppress(grpc.RpcError):
                        p.contribute_seed(hand_id, bytes(32))

            def in_phase(phase: int, hand_id: str = hand_id) -> Callable[[api.PlayerView], bool]:
                return lambda v: v.hand_id == hand_id and v.phase == phase

            view = a.wait(in_phase(api.HAND_PHASE_PLAYING))
            knocker = a if view.turn_seat == view.my_seat else b
            knocker.play(toy_pb2.Knock(), hand_id=hand_id, turn_no=view.turn_no)
            a.wait(in_phase(api.HAND_PHASE_ENDED))
        assert view.match.ended.reason == "games_played"
        seat = {x: s.seat for x, s in seats_of(view).items()}
        account = {s: x for x, s in seat.items()}
        ended_games = [
            p
            for p in rummy_stack.payloads(TABLE_EVENTS, table.table_id)
            if isinstance(p, mpb.GameEnded)
        ]
        assert [g.game_no for g in ended_games] == [1, 2]
        settled = {
            s.game_no: s for s in rummy_stack.match_settlements(table.table_id, games, timeout=30.0)
        }
        net = {a.account_id: 0, b.account_id: 0}
        commission = 0
        for game in ended_games:
            total = {t.seat: t.points for t in game.totals}
            loser = next(s for s in total if s != game.winner)
            assert total[game.winner] >= target > total[loser]
            paid = min(total[game.winner] - total[loser], cap) * point_value
            cut = paid * bps // 10_000
            expected = {account[loser]: -paid, account[game.winner]: paid - cut}
            lines = {account[line.seat]: line.amount_hundredths for line in game.settlement.lines}
            assert lines == expected
            assert game.settlement.commission_hundredths == cut
            assert journal(settled[game.game_no]) == {**expected, HOUSE: cut}
            for x, amount in expected.items():
                net[x] += amount
            commission += cut
        balances = operator.settled_balances(list(net))
        assert balances == {x: GRANT + amount for x, amount in net.items()}
        assert operator.balance(HOUSE).balance_hundredths - house_before == commission
        print(f"toy game-to: {deals} deals, nets {net}, commission {commission}")
    finally:
        table.close()


def released_holds(stack: RunningStack, table_id: str, timeout: float = 30.0) -> dict[str, int]:
    """The ledger's MatchHoldsReleased of the table: hundredths released by account."""
    deadline = time.monotonic() + timeout
    while True:
        payloads = stack.payloads(LEDGER_EVENTS, table_id)
        assert not [p for p in payloads if isinstance(p, ledger_pb.MatchSettled)]
        found = [p for p in payloads if isinstance(p, ledger_pb.MatchHoldsReleased)]
        if found:
            (released,) = found
            return {r.account_id: r.amount_hundredths for r in released.released}
        if time.monotonic() > deadline:
            raise TimeoutError(f"no MatchHoldsReleased for table {table_id}")
        time.sleep(0.5)


def test_a_pool_match_closed_by_an_operator_mid_deal_plays_the_deal_out_and_releases_every_entry(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=650))
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 1000, RULES, options)
    try:
        a, b, c = seated(table, "closea", "closeb", "closec")
        done: set[str] = set()
        # Deal 1: A wins, B first drop 20, C middle drop 40.
        play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
        # Deal 2 is being played when the operator closes the table: it plays out (B wins),
        # then the match is aborted: every entry (650 each) released, nothing moves.
        next_hand(a, done)
        operator.close_table(table.table_id)
        play_deal({b: WIN, a: FIRST_DROP, c: FIRST_DROP}, set(done))
        view = b.wait(lambda v: v.match.HasField("aborted"), what="the match aborted")
        assert view.match.deals_scored == 2
        assert released_holds(rummy_stack, table.table_id) == {
            a.account_id: 650,
            b.account_id: 650,
            c.account_id: 650,
        }
        balances = operator.settled_balances([p.account_id for p in (a, b, c)])
        assert balances == {p.account_id: GRANT for p in (a, b, c)}
    finally:
        table.close()


def test_a_seat_that_cannot_cover_its_entry_aborts_the_match_and_every_other_entry_is_released(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    options = mpb.MatchOptions(deals=mpb.DealsOptions(deals=2, entry_fee_hundredths=2500))
    table = Table(operator, rummy_stack.endpoints.table, 2, 0, 1000, RULES, options)
    try:
        rich, poor = table.player("rich", grant=GRANT), table.player("poor", grant=2499)
        for p in (rich, poor):
            p.take_seat()
        view = rich.wait(lambda v: v.match.HasField("aborted"), what="the match aborted")
        assert "could not cover its entry" in view.match.aborted.reason
        assert released_holds(rummy_stack, table.table_id) == {rich.account_id: 2500}
        balances = operator.settled_balances([rich.account_id, poor.account_id])
        assert balances == {rich.account_id: GRANT, poor.account_id: 2499}
        # No deal is dealt to a match that never held its money.
        assert not any(v.hand_id for v in rich.views)
        # The short seat sits out until its player leaves and sits again; then a new match
        # starts and holds both entries.
        first_match = view.match.match_id
        operator.grant(poor.account_id, 1)
        poor.leave()
        poor.take_seat()
        view = rich.wait(
            lambda v: v.match.match_id not in ("", first_match) and bool(v.hand_id),
            what="a second match dealing",
        )
        assert view.match.match_id == f"{table.table_id}/2"
        assert operator.balance(poor.account_id).reserved_hundredths == 2500
        assert operator.balance(rich.account_id).reserved_hundredths == 2500
    finally:
        table.close()


def test_a_rejoin_the_ledger_cannot_hold_leaves_the_seat_eliminated_and_the_match_plays_on(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 1000, commission 10%, rejoin on; C holds exactly one entry, so its rejoin's second
    # entry cannot be held: that rejoin fails, not the match of the others.
    options = mpb.MatchOptions(
        pool=mpb.PoolOptions(target=101, entry_fee_hundredths=1000, rejoin=True)
    )
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 1000, RULES, options)
    try:
        a, b = table.player("rejoina", grant=GRANT), table.player("rejoinb", grant=GRANT)
        c = table.player("rejoinc", grant=1000)
        for p in (a, b, c):
            p.take_seat()
        done: set[str] = set()
        # As in the first test: A 20, B 40, C 120 after three deals; C offered 41, accepts.
        view = rejoin_after_elimination(a, b, c, done)
        # The ledger cannot hold C's second entry: C stays out at 120, A and B play on.
        assert not view.match.HasField("aborted"), view.match.aborted.reason
        seat_c = seats_of(view)[c.account_id]
        assert (seat_c.status, seat_c.total) == ("eliminated", 120)
        # Deal 4: A wins, B middle drop 40 -> 80; deal 5: A wins, B middle drop 40 -> 120: out.
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        play_deal({a: WIN, b: MIDDLE_DROP}, done)
        view = match_over(a)
        assert totals(view) == {a.account_id: 20, b.account_id: 120, c.account_id: 120}
        # Pool 3 x 1000 = 3000 (C's one entry); commission 300; A: 3000 - 300 - 1000 = +1700.
        expected = {a.account_id: 1700, b.account_id: -1000, c.account_id: -1000}
        assert journal(match_settled(rummy_stack, table.table_id)) == {**expected, HOUSE: 300}
        balances = operator.settled_balances(list(expected))
        assert balances == {a.account_id: 6700, b.account_id: 4000, c.account_id: 0}
    finally:
        table.close()


def test_an_absent_seat_is_dropped_each_deal_and_stays_in_and_a_seat_leaving_between_deals_forfeits(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    # Entry 400, commission 5%; turns of 30 s (3 s at the session's clock): C never acts, so
    # each deal the clock times out its turns and drops it after three missed turns, for the
    # format's middle drop (40).
    options = mpb.MatchOptions(pool=mpb.PoolOptions(target=101, entry_fee_hundredths=400))
    rules = rule_set(turn_seconds=30, seed_window_seconds=10, start_delay_seconds=30)
    table = Table(operator, rummy_stack.endpoints.table, 3, 0, 500, rules, options)
    house_before = operator.balance(HOUSE).balance_hundredths
    try:
        a, b, c = seated(table, "absenta", "absentb", "absentc")
        done: set[str] = set()
        # Deal 1: A wins, B first drop 20, C dropped on missed turns 40: C stays in.
        ended = play_deal({a: WIN, b: FIRST_DROP, c: ABSENT}, done, timeout=90)
        outcome = {r.account_id: (r.outcome, r.points) for r in ended.result.results}
        assert outcome[c.account_id][1] == 40
        view = a.wait(lambda v: v.match.deals_scored == 1)
        assert totals(view) == {a.account_id: 0, b.account_id: 20, c.account_id: 40}
        assert seats_of(view)[c.account_id].status == "in"
        # B leaves between deals: out of the match, its entry forfeited.
        b.leave()
        view = a.wait(lambda v: seats_of(v)[b.account_id].status == "left")
        # Deals 2 and 3 are dealt to A and the absent C: dropped again, 80, then 120: out.
        view = play_deal({a: WIN, c: ABSENT}, done, timeout=90)
        assert sorted(s.seat for s in view.seats if s.dealt_in) == sorted(
            seats_of(view)[x].seat for x in (a.account_id, c.account_id)
        )
        play_deal({a: WIN, c: ABSENT}, done, timeout=90)
        view = match_over(a)
        assert totals(view) == {a.account_id: 0, b.account_id: 20, c.account_id: 120}
        # Pool 3 x 400 = 1200; commission floor(1200 x 500 / 10000) = 60; A: 1200 - 60 - 400
        # = +740; B and C forfeit 400 each. 740 - 800 + 60 = 0.
        expected = {a.account_id: 740, b.account_id: -400, c.account_id: -400}
        assert_paid(
            operator, match_settled(rummy_stack, table.table_id), expected, 60, house_before
        )
    finally:
        table.close()
