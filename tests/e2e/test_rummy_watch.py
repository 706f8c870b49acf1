"""``rummy watch NAME`` against the five services on the real brokers: the command runs as its
own process, piped (one line per event, no escape codes), on a two-seat points table found by its
name, while two bots play; it prints whose turn it is, the draws and discards, the hand's result,
and ends by itself after ``--hands 1``. No line shows a card dealt to a hand or left in the stock
that the table never showed (in the pile, as the cut or the open card: the table's own stream
says which). A name that names no table is one ``Error:`` line, exit status 1.

Table: 2 seats, point value 10 hundredths a point, commission 500 bps, Bombay Baazi.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.stack import stop_process
from rummy_ops.table_names import list_tables
from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules import registry
from rummy_rules.console import CLOSED_PIPE_STATUS
from rummy_table.contract import TableRouter
from rummy_testing.players import Operator, Table, rule_set
from rummy_testing.stacks import RunningStack

RUMMY = Path(sys.executable).with_name("rummy")
#: A card face in the watch's lines (``10H``, ``QS``, a joker ``JK...``).
FACE = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]\b|\bJK\w*")


def _bots(operator: Operator, stack: RunningStack, table_id: str) -> Iterator[Bot]:
    """Two bots seated at the table, each a fresh account granted 10,000.00; they never give a
    hand up (a first drop before any draw would end it at once)."""
    rng = random.Random(7)
    shoe = registry.lookup("indian-points").house_rule_set(2, 10, 500).shoe  # the table's
    router = TableRouter(stack.endpoints.table)
    run = uuid.uuid4().hex[:6]
    for seat in range(2):
        account = f"watch-{run}-{seat}"
        operator.grant(account, 1_000_000)
        token = operator.authority.issue(account, Role.PLAYER, 3600)
        brain = BotBrain(seed=rng.getrandbits(64), temperament=Temperament(give_up=0.0))
        bot = Bot(account, token, router, table_id, shoe, brain)
        bot.take_seat()
        yield bot


def _hidden_faces(payloads: list[object], hand_id: str) -> set[str]:
    """The faces of the cards dealt to the hand's seats or left in its stock that the table never
    showed, by its stream: not the cut, the open card, a discard (two decks: a face shown once
    is shown)."""
    dealt = next(p for p in payloads if isinstance(p, dealer_pb.HandDealt) and p.hand_id == hand_id)
    private = {c.face for h in dealt.hands for c in h.cards} | {c.face for c in dealt.stock}
    public = {dealt.wild_cut.face, dealt.first_open.face}
    public |= {p.card.face for p in payloads if isinstance(p, pb.CardDiscarded)}
    return private - public


@pytest.mark.timeout(180)
def test_rummy_watch_follows_a_table_by_its_name_while_bots_play_a_hand(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    address = rummy_stack.endpoints.table
    token = operator.authority.issue("ops-watch", Role.OPERATOR, 600)
    rules = rule_set(turn_seconds=300, seed_window_seconds=2, start_delay_seconds=2)
    table_id = operator.open_table(2, 10, 500, rules)
    router = TableRouter(address)
    (name,) = [
        t.name for t in list_tables(router, bearer_metadata(token)) if t.table_id == table_id
    ]
    router.close()
    service = ["--address", address, "--token", token]
    process = subprocess.Popen(
        [str(RUMMY), "watch", name, "--hands", "1", *service],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    first = threading.Event()

    def read() -> None:
        for line in process.stdout or ():
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    bots: list[Bot] = []
    try:
        # the bots sit once the watch shows the empty table: it sees the whole first hand
        assert first.wait(60), process.stderr.read() if process.stderr else ""
        bots = list(_bots(operator, rummy_stack, table_id))
        for bot in bots:
            bot.start()
        status = process.wait(timeout=150)
        reader.join(10)
        errors = process.stderr.read() if process.stderr is not None else ""
    finally:
        for bot in bots:
            bot.stop(leave=True)
        if process.poll() is None:
            stop_process(process)
        operator.close_table(table_id)
    output = "".join(lines)
    notes = [(b.account_id, b.stats.actions, b.stats.stalls, b.stats.errors[:5]) for b in bots]
    assert status == 0, (status, errors, output, notes)
    assert not any(said for _account, _actions, _stalls, said in notes), notes
    assert "\x1b" not in output  # piped: no escape codes
    stamped = re.compile(r"\d\d:\d\d:\d\d v\d+ ")
    assert all(stamped.match(line) for line in lines), output
    body = [stamped.sub("", line, count=1).rstrip("\n") for line in lines]
    assert body[0].startswith(f"table {name} ({table_id})  indian-points  single  point 0.10")
    assert any(re.fullmatch(r"s\d watch-\w+-\d took the seat", x) for x in body), (output, notes)
    assert any(re.fullmatch(r"hand 1 begun \(.+\), dealer s\d", x) for x in body), output
    turns = [x for x in body if re.fullmatch(r"turn \d+: s\d \S+ to draw, until .* UTC", x)]
    assert turns, output
    assert any(re.fullmatch(r"s\d drew from the stock", x) for x in body), output
    assert any(re.fullmatch(r"s\d discarded \S+", x) for x in body), output
    results = [x for x in body if x.startswith("hand 1  winner s")]
    assert len(results) == 1 and "net [" in results[0], output
    # which hand it was, and what of it the table kept to itself
    payloads = rummy_stack.payloads(TABLE_EVENTS, table_id)
    hand_id = next(p.hand_id for p in payloads if isinstance(p, pb.HandEnded))
    hidden = _hidden_faces(payloads, hand_id)
    assert hidden  # a hand's cards are never all shown by its end
    assert not set(FACE.findall(output)) & hidden, (set(FACE.findall(output)) & hidden, output)


def test_rummy_watch_of_a_name_no_table_has_is_an_error(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    token = operator.authority.issue("ops-watch", Role.OPERATOR, 600)
    name = f"no-such-{uuid.uuid4().hex[:6]}"
    done = subprocess.run(
        [str(RUMMY), "watch", name, "--address", rummy_stack.endpoints.table, "--token", token],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr == f"Error: no table named {name!r} (`rummy tables` lists every table)\n"


def _started(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """``rummy watch ARGS`` piped, and its first line (once it has printed one)."""
    process = subprocess.Popen(
        [str(RUMMY), "watch", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline()


def test_rummy_watch_ends_quietly_on_ctrl_c_and_a_closed_pipe_and_refuses_a_closed_table(
    operator: Operator, rummy_stack: RunningStack
) -> None:
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    token = operator.authority.issue("ops-watch", Role.OPERATOR, 600)
    service = [table.table_id, "--address", rummy_stack.endpoints.table, "--token", token]
    try:
        # Ctrl-C: status 0, nothing on standard error
        process, first = _started(service)
        assert f"({table.table_id})" in first, first
        process.send_signal(signal.SIGINT)
        _out, errors = process.communicate(timeout=30)
        assert (process.returncode, errors) == (0, "")
        # the reader goes away: the next event's line meets the closed pipe and ends the watch
        process, first = _started(service)
        assert f"({table.table_id})" in first
        assert process.stdout is not None
        process.stdout.close()
        table.seated("piped", 1)
        process.wait(timeout=30)
        errors = process.stderr.read() if process.stderr is not None else ""
        assert (process.returncode, errors) == (CLOSED_PIPE_STATUS, "")
    finally:
        table.close()
    operator.close_table(table.table_id)
    done = subprocess.run(
        [str(RUMMY), "watch", *service], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "  closed  " in done.stdout.splitlines()[0], done
    assert done.stderr.startswith("Error: table ") and " is closed: nothing more" in done.stderr
