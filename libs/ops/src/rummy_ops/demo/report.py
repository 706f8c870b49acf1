"""What the demo measured (:class:`DemoReport`, one :class:`HandRecord` per hand, one
:class:`MatchRecord` per match played to its end) and how it is told: one line per hand
(:func:`hand_line`) and per match (:func:`match_line`), the closing lines (:func:`summary`) and
the exit verdict (:func:`succeeded`). Money in hundredths of a House Token, printed as tokens
with two decimals (:func:`rummy_ops.money.tokens`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as table_events
from rummy_game.bundle import bundle_of, bundles, outcome
from rummy_ops.demo.endpoints import Endpoints
from rummy_ops.money import tokens
from rummy_ops.replay.limits import LimitRecheck
from rummy_ops.replay.render import winners
from rummy_rules.registry import LEGACY_VARIANT


@dataclass
class HandRecord:
    """One hand as the operator's watch saw it end (``result``) or abort (``aborted_reason``)."""

    table: str
    table_id: str
    hand_no: int
    hand_id: str
    result: table_events.HandEnded | None = None
    aborted_reason: str = ""
    #: The table's variant (left out: the legacy variant): its bundle names the seats' outcomes.
    variant: str = LEGACY_VARIANT


@dataclass
class MatchRecord:
    """A format table's match as the operator's watch saw it once over: its last view (with
    ``result``: ended, or aborted)."""

    table: str
    table_id: str
    view: match_pb.MatchView

    @property
    def commission_hundredths(self) -> int:
        """The house's commission on the match's prize pool (0 unless it ended settled)."""
        if self.view.WhichOneof("result") != "ended":
            return 0
        return int(self.view.ended.settlement.commission_hundredths)


@dataclass(frozen=True)
class GameMoney:
    """One game's settlement of a match that settles each game (game to N; Hollywood: game 1,
    its one settlement), as the table's match events recorded it (``GameEnded``): ``pool`` what
    the losers paid, ``commission`` the house's, ``lines`` (seat, net hundredths); or, as game
    0, a match's end settlement (``MatchEnded``: ``pool`` the prize pool, ``winner`` the first
    seat paid)."""

    game_no: int
    winner: int
    pool_hundredths: int
    commission_hundredths: int
    lines: tuple[tuple[int, int], ...]

    def line(self) -> str:
        net = " ".join(f"s{seat}:{tokens(amount, True)}" for seat, amount in self.lines)
        if self.game_no == 0:  # the match-end settlement (MatchEnded) of the prize pool
            return (
                f"match settled: prize pool {tokens(self.pool_hundredths)}, commission "
                f"{tokens(self.commission_hundredths)}  net [{net}]"
            )
        return (
            f"game {self.game_no} settled: s{self.winner} paid by the others "
            f"{tokens(self.pool_hundredths)}, commission {tokens(self.commission_hundredths)}  "
            f"net [{net}]"
        )


@dataclass
class DemoReport:
    """Everything :func:`play` measured. Money in hundredths of a House Token."""

    run_id: str
    endpoints: Endpoints | None = None
    tables: dict[str, str] = field(default_factory=dict)  # name -> table id
    hands: list[HandRecord] = field(default_factory=list)
    matches: list[MatchRecord] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)  # bot account -> posted balance
    reserved: dict[str, int] = field(default_factory=dict)
    granted_hundredths: int = 0
    commission_hundredths: int = 0  # the hands' and the matches'
    house_commission_delta: int | None = None  # the ledger's house account, before vs after
    endings: Counter[str] = field(default_factory=Counter)
    #: Match id -> the settlements of its games (read from its events at the replay step: a
    #: match view carries none), their commission counted in ``commission_hundredths``. Every
    #: match the log holds, also one no watch saw end (aborted when its table's bots left).
    game_money: dict[str, list[GameMoney]] = field(default_factory=dict)
    #: Matches the replay found settled that no watch recorded (match id -> table id): one
    #: begun before the bots' leaves reached the table, which their leaves ended.
    unwatched: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    slowest_action_seconds: float = 0.0
    slowest_action: str = ""
    bot_errors: list[str] = field(default_factory=list)
    bot_actions: int = 0
    stalled_turns: int = 0
    refused_actions: int = 0  # the turn or match had moved on (a deadline raced the bot)
    finished: bool = False
    stopped_because: str = ""
    #: Bots that set themselves a daily loss limit: account -> the limit (hundredths).
    loss_limits: dict[str, int] = field(default_factory=dict)
    #: The seats their own limits held back ("not dealt in"), each re-checked by the replay
    #: step against the limits in force then (None: not replayed).
    limit_rechecks: list[LimitRecheck] | None = None

    @property
    def ended(self) -> list[HandRecord]:
        return [h for h in self.hands if h.result is not None]

    @property
    def conserved(self) -> bool:
        """The bots' balances plus the commission taken equal the tokens granted."""
        return sum(self.balances.values()) + self.commission_hundredths == self.granted_hundredths


# -- how a hand ended ----------------------------------------------------------------------------

#: The winner's way of winning: it showed melds (a declare, a knock) or not (every other seat
#: went out first, or the variant scores unmelded hands).
WON_SHOWING_MELDS = "won showing melds"
WON_WITHOUT_MELDS = "won without showing melds"


def _article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter: ``an undercut``, ``a gin``)."""
    return "an" if word[:1].lower() in "aeiou" and word[:1] != "" else "a"


def notable(name: str, variant: str | None = None) -> str:
    """The report's phrase for a hand in which some seat's outcome was ``name`` (a notable
    outcome of ``variant``'s bundle, ``rummy_game.bundle.Outcome``; None: the first installed
    bundle's): ``with a wrong declare``, ``with an undercut``."""
    described = outcome(name, variant)
    label = described.label if described is not None else name
    return f"with {_article(label)} {label}"


def endings(variants: Iterable[str] | None = None) -> tuple[str, ...]:
    """Every way a hand can end that the report counts: the two ways of winning, then a
    phrase for each notable outcome the ``variants`` played declare (None: every installed
    variant; Indian points: a wrong declare, a timeout auto-drop; gin: an undercut, gin, big
    gin), each phrase once."""
    chosen = (
        list(bundles())
        if variants is None
        else [b for b in (bundle_of(v) for v in dict.fromkeys(variants)) if b is not None]
    )
    phrases = dict.fromkeys(
        notable(o.name, b.name) for b in chosen for o in b.outcomes if o.notable
    )
    return (WON_SHOWING_MELDS, WON_WITHOUT_MELDS, *phrases)


def endings_of(result: table_events.HandEnded, variant: str = LEGACY_VARIANT) -> list[str]:
    """The ways a hand of ``variant`` ended (:func:`endings`): exactly one way of winning (the
    winner showed melds or not), plus one phrase per notable outcome (of ``variant``'s bundle)
    some seat had, in seat order."""
    winner = next((r for r in result.results if r.seat == result.winner_seat), None)
    shown = winner is not None and len(winner.arrangement.melds) > 0
    out = [WON_SHOWING_MELDS if shown else WON_WITHOUT_MELDS]
    for r in result.results:
        described = outcome(r.outcome, variant)
        phrase = notable(r.outcome, variant)
        if described is not None and described.notable and phrase not in out:
            out.append(phrase)
    return out


def _short(name: str, variant: str = LEGACY_VARIANT) -> str:
    """A seat outcome's mark in a hand line (``variant``'s ``Outcome.short``; the word itself
    for one that variant does not declare)."""
    described = outcome(name, variant)
    return described.short if described is not None else name


def hand_line(record: HandRecord) -> str:
    """One line for a hand: table, hand, winner, each seat's points (with how it went out; in a
    game where every seat scores every hand, its signed score, ``SeatResult.score``), the
    commission and each seat's net token movement."""
    if record.result is None:
        return f"{record.table:<9} hand {record.hand_no:>3}  aborted: {record.aborted_reason}"
    r = record.result
    scored = any(x.score for x in r.results)
    points = " ".join(
        f"s{x.seat}:{x.score if scored else x.points}{_short(x.outcome, record.variant)}"
        for x in r.results
    )
    net = " ".join(f"s{x.seat}:{tokens(x.amount_hundredths, True)}" for x in r.settlement)
    how = ", ".join(endings_of(r, record.variant))
    return (
        f"{record.table:<9} hand {record.hand_no:>3}  {winners(r)}  "
        f"{'scores' if scored else 'points'} [{points}]  "
        f"commission {tokens(r.commission_hundredths)}  net [{net}]  ({how})"
    )


_STATUS = {"in": "", "eliminated": "x", "left": "lv"}


def match_line(record: MatchRecord) -> str:
    """One line for a match once over: table, format, the winner(s) and why, after how many
    deals, each seat's total or chips (``x``: eliminated, ``lv``: left), and the money: the prize
    pool, the commission, the prize (pool less commission) and each seat's net tokens."""
    v = record.view
    head = f"{record.table:<9} match {v.match_format}"
    if v.WhichOneof("result") == "aborted":
        released = " ".join(f"s{x.seat}:{tokens(x.points)}" for x in v.aborted.released)
        return f"{head}  aborted: {v.aborted.reason}; released [{released}]"
    if v.WhichOneof("result") != "ended":
        return f"{head}  not over ({v.phase}, {v.deals_scored} deals scored)"
    ended = v.ended
    won = " ".join(f"s{w}" for w in ended.winners) or "-"
    chips = any(seat.HasField("chips") for seat in v.seats)
    standing = " ".join(
        f"s{seat.seat}:{seat.chips if chips else seat.total}{_STATUS.get(seat.status, seat.status)}"
        for seat in v.seats
    )
    text = (
        f"{head}  won by {won} ({ended.reason}) after {v.deals_scored} deals  "
        f"{'chips' if chips else 'totals'} [{standing}]"
    )
    if not ended.HasField("settlement"):
        if v.sheets:
            return text + "  (no match-end settlement: the format settles each game)"
        return text + "  (a free table: nothing moves)"
    st = ended.settlement
    net = " ".join(f"s{x.seat}:{tokens(x.amount_hundredths, True)}" for x in st.lines)
    return (
        f"{text}  pool {tokens(st.pool_hundredths)} commission "
        f"{tokens(st.commission_hundredths)} prize "
        f"{tokens(st.pool_hundredths - st.commission_hundredths)}  net [{net}]"
    )


def sheet_lines(view: match_pb.MatchView) -> list[str]:
    """The match's score sheets as the format keeps them (``MatchView.sheets``: game to N one
    per game, Hollywood its three columns; none for other formats), one line each: the sheet's
    number, running or its winner, then each seat's hand points, boxes (hands won in it), bonus
    added at its end (game bonus or shutout, and the boxes) and total (``cap``: lost at the cap)."""
    out = []
    for sheet in view.sheets:
        state = "running" if sheet.running else f"won by s{sheet.winner}"
        seats = "  ".join(
            f"s{x.seat}: {x.points} pts, {x.boxes} boxes, bonus {x.bonus}, total {x.total}"
            + (" (lost at the cap)" if x.lost_at_cap else "")
            for x in sheet.seats
        )
        out.append(f"sheet {sheet.number} ({state}): {seats}")
    return out


def summary(report: DemoReport, replay: tuple[bool | None, str]) -> list[str]:
    """The closing lines: balances, commission, conservation, endings, timing, replay."""
    lines = ["", "balances (posted; reserved in brackets when not zero):"]
    for account in sorted(report.balances):
        reserved = report.reserved.get(account, 0)
        extra = f" [{tokens(reserved)} reserved]" if reserved else ""
        lines.append(f"  {account:<28} {tokens(report.balances[account]):>10}{extra}")
    source = "the hands and matches" if report.matches else "the hands"
    lines.append(f"house commission (from {source}): {tokens(report.commission_hundredths)}")
    if report.house_commission_delta is not None:
        lines.append(
            f"house commission account moved:   {tokens(report.house_commission_delta)}"
            " (every table of this ledger, this run's and any other's)"
        )
    total = sum(report.balances.values())
    verdict = "OK" if report.conserved else "MISMATCH"
    lines.append(
        f"conservation: balances {tokens(total)} + commission "
        f"{tokens(report.commission_hundredths)} = {tokens(total + report.commission_hundredths)}"
        f" vs granted {tokens(report.granted_hundredths)}: {verdict}"
    )
    if report.matches:
        lines.append(f"matches over: {len(report.matches)}")
        for m in report.matches:
            lines.append(f"  {match_line(m)}")
            lines += [f"    {line}" for line in sheet_lines(m.view)]
            lines += [f"    {g.line()}" for g in report.game_money.get(m.view.match_id, [])]
    names = {table_id: name for name, table_id in report.tables.items()}
    for match_id, table_id in report.unwatched.items():
        lines.append(
            f"  {names.get(table_id, table_id)}: match {match_id} begun as the bots left, "
            "ended by their leaves"
        )
        lines += [f"    {g.line()}" for g in report.game_money[match_id]]
    ended = report.ended
    aborted = len(report.hands) - len(ended)
    lines.append(f"hands ended: {len(ended)}" + (f" (and {aborted} aborted)" if aborted else ""))
    for ending in endings(h.variant for h in report.hands):
        lines.append(f"  {ending:<32} {report.endings.get(ending, 0)}")
    rate = len(ended) / report.wall_seconds if report.wall_seconds else 0.0
    lines.append(
        f"wall time {report.wall_seconds:.1f} s, {rate:.2f} hands/s, slowest player action "
        f"{report.slowest_action_seconds * 1000:.0f} ms ({report.slowest_action or '-'})"
    )
    lines.append(
        f"bot calls {report.bot_actions}, turns stalled on purpose {report.stalled_turns}, "
        f"refused because the turn or match had moved on {report.refused_actions}"
    )
    if report.bot_errors:
        lines.append(f"bot errors ({len(report.bot_errors)}), first: {report.bot_errors[0]}")
    if not report.finished:
        why = report.stopped_because or "stopped early"
        lines.append(f"NOT FINISHED: {why} before every table played its hands")
    if report.loss_limits:
        lines.append(limits_line(report))
    ok, text = replay
    lines.append(text if ok is None else f"replay: {'OK' if ok else 'MISMATCH'}: {text}")
    return lines


def limits_line(report: DemoReport) -> str:
    """``seats held back by a loss limit: 2 (of 2 bots with a daily loss limit); every one
    re-checked against the limits in force then``."""
    checks = report.limit_rechecks
    head = (
        f"seats held back by a loss limit: {'?' if checks is None else len(checks)} "
        f"(of {len(report.loss_limits)} bots with a daily loss limit)"
    )
    if checks is None:
        return head + "; not re-checked (no replay)"
    bad = [c for c in checks if not c.ok]
    if bad:
        return head + f"; {len(bad)} not re-checked clean, first: {bad[0].line()}"
    return head + "; every one re-checked against the limits in force then"


def succeeded(report: DemoReport, replay: tuple[bool | None, str]) -> bool:
    """The exit verdict: finished, books conserved, no reservation left, replay not failed."""
    return (
        report.finished
        and report.conserved
        and not any(report.reserved.values())
        and replay[0] is not False
    )
