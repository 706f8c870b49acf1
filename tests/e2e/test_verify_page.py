"""The verifier page (web/verify/index.html) in a real headless Chromium (Debian's, driven by
Playwright for Python; no browser download), and the same checks under Node (web/verify/cli.mjs),
on proof bundles of real hands played through the services: the short demo's hands (valid
declares, wrong declares then a declare, drops, timeout drops) and a hand played here until its
stock is reshuffled. Every step passes on the real bundles; every tamper is caught at the step that
first differs; a forged but self-consistent bundle passes on its own and fails against the
player's own record; an unknown variant is never passed. ``GetHandProof`` gives the seated players
and operators the same bundle as ``rummy proof``, and FAILED_PRECONDITION while the hand runs.
A screenshot of a verified hand is saved in the test's tmp dir (its path is printed)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_ops.cli import main
from rummy_ops.demo import DemoReport, verify_demo
from rummy_ops.money import commission_text, tokens
from rummy_ops.proof import write_proofs
from rummy_ops.replay.sources import read_kafka
from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.limits import open_channel
from rummy_rules import json_form
from rummy_rules.deck import Shoe
from rummy_rules.events import HandEnded, SeatResult
from rummy_rules.indian.arrangement import valid_discards
from rummy_rules.melds import DEFAULT_MELD_OPTIONS
from rummy_rules.settlement import settle
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_testing.old_shapes import INDIAN_BUNDLE_SHAPES
from rummy_testing.players import (
    Operator,
    Player,
    Table,
    next_turn,
    on_turn,
    operator_for,
    play_turn_with_solver,
    rule_set,
    seed_and_wait_for_play,
)
from rummy_testing.tools import required_executable
from rummy_testing.variant_play import shuffled_deal

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "web" / "verify" / "index.html"
CLI = ROOT / "web" / "verify" / "cli.mjs"
CHROMIUM = "/usr/bin/chromium"
KEPT_INDIAN = sorted((ROOT / "tests" / "data" / "kept").glob("indian-*.bundle.json"))
RunningStack = Any
Bundle = dict[str, Any]


def events_of(bundle: Bundle, kind: str) -> list[dict[str, Any]]:
    return [e["event"] for e in bundle["events"] if e["event"]["type"] == kind]


# -- real hands ---------------------------------------------------------------------------------


def proof_call(player_or_operator: Any, table_id: str, hand_id: str, token: str) -> str:
    stub = player_or_operator
    reply = stub.GetHandProof(
        api.GetHandProofRequest(table_id=table_id, hand_id=hand_id),
        metadata=bearer_metadata(token),
        timeout=30,
    )
    return str(reply.bundle_json)


def play_until_reshuffled(players: list[Player], extra_turns: int = 2) -> tuple[str, str]:
    """Two seats draw from the stock and discard what they drew until the stock has been
    reshuffled and ``extra_turns`` more turns were played, then the seat on turn drops (a middle
    drop): the other wins. Returns (hand id, the FAILED_PRECONDITION message GetHandProof gave
    while the hand ran). Only the first seat sends a client seed: the other's is empty (late)."""
    first = players[0]
    view = first.wait_phase(api.HAND_PHASE_SEEDING, timeout=60)
    first.contribute_seed(view.hand_id, b"\x01" * 32)
    view = first.wait_phase(api.HAND_PHASE_PLAYING, timeout=60)
    hand_id = view.hand_id
    try:
        proof_call(first.stub, first.table_id, hand_id, first.token)
        pytest.fail("GetHandProof answered while the hand was running")
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, error
        running = str(error.details())
    stock_seen = view.stock_count
    reshuffled_at: int | None = None
    while True:
        view = first.wait(
            lambda v: v.phase == api.HAND_PHASE_PLAYING and not v.has_drawn and v.stock_count > 0,
            60,
            "a turn with a stock to draw from",
        )
        if view.stock_count > stock_seen and reshuffled_at is None:
            reshuffled_at = view.turn_no
        stock_seen = view.stock_count
        p = on_turn(players, view)
        if reshuffled_at is not None and view.turn_no >= reshuffled_at + extra_turns:
            p.drop(turn_no=view.turn_no)
            p.wait_phase(api.HAND_PHASE_ENDED, timeout=30)
            return hand_id, running
        drawn = p.draw(turn_no=view.turn_no)
        p.discard(drawn.card, turn_no=view.turn_no)

        def turn_passed(v: api.PlayerView, turn_no: int = view.turn_no) -> bool:
            return v.turn_no > turn_no

        first.wait(turn_passed, 30, "the next turn")


@pytest.fixture(scope="module")
def operator(rummy_stack: RunningStack) -> Iterator[Operator]:
    op = operator_for(rummy_stack)
    yield op
    op.close()


def fetch_when_revealed(player: Player, table_id: str, hand_id: str) -> str:
    """GetHandProof as ``player``, retried while the seed is not revealed yet (it is revealed
    right after the hand ends)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return proof_call(player.stub, table_id, hand_id, player.token)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                raise
            time.sleep(0.3)


@pytest.fixture(scope="module")
def wrong_then_declared(rummy_stack: RunningStack, operator: Operator) -> Bundle:
    """A hand at a 4-seat table where the first seat declares wrongly (80 points) and then the
    next seat plays with the solver until it declares validly while the third only draws and
    discards."""
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        players = table.seated("show", 3, grant=5000)
        view = seed_and_wait_for_play(players)
        wrong = on_turn(players, view)
        view = wrong.wait_to_draw()  # its own view: its own cards
        drawn = wrong.draw(turn_no=view.turn_no).card
        cards = [*wrong.hand(view), wrong.card(drawn)]
        valid = set(valid_discards(cards, wrong.wild(view), DEFAULT_MELD_OPTIONS))
        face_down = next(c for c in cards if c not in valid)
        assert not wrong.declare(wrong.wire(face_down), view.turn_no).valid
        turn = next_turn(players, view.turn_no)
        assert turn is not None
        declarer = on_turn(players, turn)
        for _ in range(400):
            if on_turn(players, turn) is declarer:
                if play_turn_with_solver(declarer, DEFAULT_MELD_OPTIONS) is not None:
                    break
            else:
                on_turn(players, turn).draw_and_discard_drawn()
            turn = next_turn(players, turn.turn_no)
            assert turn is not None, "the hand ended before anyone declared"
        declarer.wait_phase(api.HAND_PHASE_ENDED)
        bundle: dict[str, Any] = json.loads(
            fetch_when_revealed(declarer, table.table_id, view.hand_id)
        )
        return bundle
    finally:
        table.close()


@pytest.fixture(scope="module")
def reshuffled(rummy_stack: RunningStack, operator: Operator) -> dict[str, Any]:
    """A hand played to a reshuffled stock at a 4-seat table (0.10 a point, 5% commission), one
    seat's client seed empty, its bundle fetched through GetHandProof by a seated player and by an
    operator."""
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500)
    try:
        players = table.seated("verify", 2, grant=5000)
        hand_id, running = play_until_reshuffled(players)
        text = fetch_when_revealed(players[1], table.table_id, hand_id)
        ops_token = operator.authority.issue("ops-verify", Role.OPERATOR, 600)
        stranger = operator.authority.issue("not-seated", Role.PLAYER, 600)
        return {
            "table_id": table.table_id,
            "hand_id": hand_id,
            "bundle": json.loads(text),
            "text": text,
            "operator_text": proof_call(players[0].stub, table.table_id, hand_id, ops_token),
            "stranger": stranger,
            "running": running,
        }
    finally:
        table.close()


@pytest.fixture(scope="module")
def timed_out(rummy_stack: RunningStack, operator: Operator) -> Bundle:
    """A hand at a 4-seat table of two, turns of 30 s (3 s at the stack's clock speed), where the
    first seat on turn never acts: the clock ends each of its turns, the other draws and discards
    on its own, and the third missed turn drops the sleeper (a timeout drop: the other wins)."""
    table = Table(operator, rummy_stack.endpoints.table, 4, 10, 500, rule_set(turn_seconds=30))
    try:
        players = table.seated("sleep", 2, grant=5000)
        view = seed_and_wait_for_play(players)
        sleeper = on_turn(players, view)
        awake = next(p for p in players if p is not sleeper)
        turn: api.PlayerView | None = view
        while turn is not None:
            if on_turn(players, turn) is awake:
                awake.draw_and_discard_drawn()
            turn = next_turn(players, turn.turn_no, timeout=30)
        awake.wait_phase(api.HAND_PHASE_ENDED)
        bundle: dict[str, Any] = json.loads(
            fetch_when_revealed(awake, table.table_id, view.hand_id)
        )
        drops = [(d["seat"], d["kind"]) for d in events_of(bundle, "indian.PlayerDropped")]
        assert drops == [(view.turn_seat, "timeout")], drops
        return bundle
    finally:
        table.close()


@pytest.fixture(scope="module")
def demo_bundles(
    rummy_stack: RunningStack, short_demo: DemoReport, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Bundle]:
    """A bundle of every ended hand of the short demo, built as ``rummy demo`` builds them."""
    assert short_demo.ended, "the short demo ended no hand"
    assert verify_demo(short_demo)[0]  # waits until the last seeds are revealed
    envelopes = []
    for table_id in sorted({h.table_id for h in short_demo.hands}):
        envelopes += read_kafka(rummy_stack.kafka_bootstrap, rummy_stack.topic_prefix, table_id)
    folder = tmp_path_factory.mktemp("proofs")
    written = write_proofs(envelopes, [h.hand_id for h in short_demo.ended], folder)
    assert written == len(short_demo.ended)
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def ending_of(bundle: Bundle) -> set[str]:
    kinds = {e["event"]["type"] for e in bundle["events"]}
    drops = {d["kind"] for d in events_of(bundle, "indian.PlayerDropped")}
    out = set()
    if "indian.Declared" in kinds:
        out.add(
            "wrong declare then a declare" if "indian.DeclarationRejected" in kinds else "declare"
        )
    if drops & {"first", "middle", "leave"}:
        out.add("drop")
    if "timeout" in drops:
        out.add("timeout drop")
    if "table.StockReshuffled" in kinds:
        out.add("reshuffled stock")
    return out


@pytest.fixture(scope="module")
def real(
    demo_bundles: dict[str, Bundle],
    reshuffled: dict[str, Any],
    wrong_then_declared: Bundle,
    timed_out: Bundle,
) -> dict[str, Bundle]:
    """One real bundle of each ending the demo and the hands played here produced (the hands
    played here bring a reshuffle, a drop, a wrong declare and a timeout drop of their own, so
    none of those depends on what the demo's bots happened to do)."""
    out: dict[str, Bundle] = {
        "reshuffled stock": reshuffled["bundle"],
        "wrong declare then a declare": wrong_then_declared,
        "timeout drop": timed_out,
    }
    for bundle in [*demo_bundles.values(), reshuffled["bundle"], wrong_then_declared]:
        for ending in sorted(ending_of(bundle)):
            out.setdefault(ending, bundle)
    return out


@pytest.fixture(scope="module")
def records(short_demo: DemoReport, demo_records_dir: Path) -> Path:
    """The folder of the demo bots' own records (tests/e2e/conftest.py's short_demo)."""
    assert any(demo_records_dir.glob("*.jsonl")), "the demo's bots kept no record"
    return demo_records_dir


def record_of(records: Path, bundle: Bundle) -> str:
    """The own record of the first seated bot of the bundle's hand."""
    started = events_of(bundle, "table.HandStarted")[0]
    account = started["seats"][0]["account_id"]
    return (records / f"{account}.jsonl").read_text()


# -- the page in Chromium, and the command under Node ------------------------------------------


@pytest.fixture(scope="module")
def browser_page() -> Iterator[Any]:
    executable = required_executable(CHROMIUM, "bash deploy/local/chromium.sh install")
    from playwright import sync_api  # a dev dependency (uv.lock): always there

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        offline: list[str] = []
        page.route("**/*", lambda route: _local_only(route, offline))
        page.goto(PAGE.as_uri())
        yield page
        assert not offline, f"the page tried to reach the network: {offline}"
        browser.close()


def _local_only(route: Any, offline: list[str]) -> None:
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        offline.append(route.request.url)
        route.abort()


def in_browser(page: Any, bundle: Bundle | str, record: str | None = None) -> dict[str, Any]:
    """Paste the bundle (and record), press Verify; the verdict and each step as the page shows
    them."""
    text = bundle if isinstance(bundle, str) else json.dumps(bundle)
    page.evaluate("delete document.body.dataset.done")
    page.fill("#bundle-text", text)
    page.fill("#record-text", record or "")
    page.click("#verify")
    page.wait_for_selector("body[data-done]", timeout=30_000)
    verdict: dict[str, Any] = page.evaluate(
        """() => ({
            verdict: document.getElementById('verdict').dataset.verdict,
            text: document.getElementById('verdict').textContent,
            steps: [...document.querySelectorAll('.step')].map(e => ({
                id: e.dataset.step, ok: e.dataset.ok === 'true',
                text: e.textContent})),
            cards: document.querySelectorAll('#picture .card').length,
            money: [...document.querySelectorAll('#money tr')].map(
                tr => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]),
        })"""
    )
    return verdict


def money_in_tokens(bundle: Bundle) -> list[list[str]]:
    """The rows the page shows of the bundle's own settlement (HandEnded): each seat's net, signed,
    then the commission, in tokens with two decimals."""
    st = events_of(bundle, "table.HandEnded")[0]["settlement"]
    rows = [
        [f"Seat {line['seat']}'s net", tokens(line["amount_hundredths"], signed=True)]
        for line in st["lines"]
    ]
    return [*rows, ["Commission to the house", tokens(st["commission_hundredths"])]]


def assert_money_shown(shown: dict[str, Any], result: dict[str, Any], bundle: Bundle) -> None:
    """The page (``shown``) shows each seat's net and the commission in tokens as the bundle's
    settlement says; cli.mjs's --json (``result``) keeps them in integer hundredths; the nets and
    the commission add up to nothing (the losers pay the winner and the house)."""
    st = events_of(bundle, "table.HandEnded")[0]["settlement"]
    assert shown["money"] == money_in_tokens(bundle), shown["money"]
    assert {line["seat"] for line in st["lines"]} == {
        s["seat"] for s in events_of(bundle, "table.HandStarted")[0]["seats"]
    }
    assert result["money"] == {
        "lines": [
            {"seat": x["seat"], "amount_hundredths": x["amount_hundredths"]} for x in st["lines"]
        ],
        "commission_hundredths": st["commission_hundredths"],
    }
    assert sum(x["amount_hundredths"] for x in st["lines"]) + st["commission_hundredths"] == 0
    scores = next(s for s in shown["steps"] if s["id"] == "scores")["text"]
    nets = ", ".join(
        f"seat {x['seat']} {tokens(x['amount_hundredths'], signed=True)}" for x in st["lines"]
    )
    assert f"net {nets} tokens; commission {tokens(st['commission_hundredths'])} tokens" in scores
    assert "hundredths" not in scores


def in_node_text(bundle: Bundle, tmp_path: Path) -> str:
    """What cli.mjs prints for people (no --json)."""
    node = required_executable("node", "bash deploy/local/node.sh install")
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    done = subprocess.run([node, str(CLI), str(path)], capture_output=True, text=True, timeout=60)
    return done.stdout


def in_node(bundle: Bundle, tmp_path: Path, record: str | None = None) -> tuple[int, Any]:
    node = required_executable("node", "bash deploy/local/node.sh install")
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    args = [node, str(CLI), str(path), "--json"]
    if record is not None:
        (tmp_path / "record.jsonl").write_text(record)
        args += ["--record", str(tmp_path / "record.jsonl")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)


def first_failing(steps: list[dict[str, Any]]) -> str | None:
    return next((s["id"] for s in steps if not s["ok"]), None)


ENDINGS = ["declare", "wrong declare then a declare", "drop", "timeout drop", "reshuffled stock"]


def test_real_hands_of_every_ending_verify_in_chromium_and_under_node(
    browser_page: Any, real: dict[str, Bundle], records: Path, tmp_path: Path
) -> None:
    missing = [e for e in ENDINGS if e not in real]
    assert not missing, f"the real hands had no {missing}"
    for ending in ENDINGS:
        bundle = real[ending]
        shown = in_browser(browser_page, bundle)
        assert shown["verdict"] == "passed", (ending, shown)
        assert [s["id"] for s in shown["steps"]] == ["bundle", "seeds", "deck", "moves", "scores"]
        assert shown["cards"] > 13 * 2, "the deal and the final hands are drawn as cards"
        code, result = in_node(bundle, tmp_path)
        assert (code, result["ok"]) == (0, True), (ending, result["steps"])
        assert_money_shown(shown, result, bundle)
    paid = events_of(real["reshuffled stock"], "table.HandEnded")[0]["settlement"]
    assert paid["commission_hundredths"] > 0, "the reshuffled hand (0.10 a point, 5%) pays"
    screenshot = tmp_path / "verified-hand.png"
    in_browser(browser_page, real["declare"], record_of(records, real["declare"]))
    browser_page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    print(f"\nscreenshot of a verified hand: {screenshot}")


def test_every_demo_hand_verifies_under_node_with_its_players_own_record(
    demo_bundles: dict[str, Bundle], records: Path, tmp_path: Path
) -> None:
    for hand_id, bundle in demo_bundles.items():
        record = record_of(records, bundle)
        code, result = in_node(bundle, tmp_path, record)
        assert code == 0, (hand_id, [s for s in result["steps"] if not s["ok"]])
        seeds = next(s for s in result["steps"] if s["id"] == "seeds")
        assert "your own record agrees with the bundle" in seeds["notes"]


# -- tampers ------------------------------------------------------------------------------------


def _flip_seed_byte(b: Bundle, other: Bundle) -> None:
    seed = bytearray.fromhex(b["server_seed_hex"])
    seed[5] ^= 0x01
    b["server_seed_hex"] = seed.hex()


def _swap_dealt_cards(b: Bundle, other: Bundle) -> None:
    hands = events_of(b, "table.HandDealt")[0]["hands"]
    hands[0]["cards"][3], hands[1]["cards"][7] = hands[1]["cards"][7], hands[0]["cards"][3]


def _draw_not_on_top(b: Bundle, other: Bundle) -> None:
    draw = next(e for e in events_of(b, "table.CardDrawn") if e["source"] == "stock")
    dealt = events_of(b, "table.HandDealt")[0]
    draw["card"] = next(c for c in dealt["stock"][5:] if c != draw["card"])


def _change_score(b: Bundle, other: Bundle) -> None:
    ended = events_of(b, "table.HandEnded")[0]
    loser = next(r for r in ended["results"] if r["seat"] != ended["winner_seat"])
    loser["points"] += 1


def _change_commission(b: Bundle, other: Bundle) -> None:
    events_of(b, "table.HandEnded")[0]["settlement"]["commission_hundredths"] += 1


def _other_commitment(b: Bundle, other: Bundle) -> None:
    theirs = events_of(other, "table.SeedCommitted")[0]["commitment"]
    events_of(b, "table.SeedCommitted")[0]["commitment"] = theirs
    events_of(b, "table.SeedsLocked")[0]["commitment"] = theirs


def _reorder_events(b: Bundle, other: Bundle) -> None:
    at = next(
        i
        for i, e in enumerate(b["events"])
        if e["event"]["type"] == "table.CardDrawn"
        and b["events"][i + 1]["event"]["type"] == "table.CardDiscarded"
    )
    b["events"][at], b["events"][at + 1] = b["events"][at + 1], b["events"][at]


def _remove_reshuffle(b: Bundle, other: Bundle) -> None:
    b["events"] = [e for e in b["events"] if e["event"]["type"] != "table.StockReshuffled"]


def _change_rule_option(b: Bundle, other: Bundle) -> None:
    events_of(b, "table.HandStarted")[0]["rule_set"]["point_value_hundredths"] += 5


def _blank_client_seed(b: Bundle, other: Bundle) -> None:
    locked = events_of(b, "table.SeedsLocked")[0]["client_seeds"]
    seat = next(s for s in locked if s["seed_hex"])
    seat["seed_hex"] = ""


TAMPERS: list[tuple[str, Callable[[Bundle, Bundle], None], str]] = [
    ("a seed byte", _flip_seed_byte, "seeds"),
    ("a swapped card in the deal", _swap_dealt_cards, "deck"),
    ("a draw of a card not on top", _draw_not_on_top, "moves"),
    ("a changed score", _change_score, "scores"),
    ("a changed commission", _change_commission, "scores"),
    ("a commitment from another hand", _other_commitment, "seeds"),
    ("a reordered event", _reorder_events, "moves"),
    ("a removed reshuffle", _remove_reshuffle, "deck"),
    ("a changed rule-set option (the point value)", _change_rule_option, "scores"),
    ("a client seed blanked to empty", _blank_client_seed, "seeds"),
]


@pytest.mark.parametrize(("what", "tamper", "step"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_each_tamper_is_caught_at_the_step_that_first_differs(
    browser_page: Any,
    reshuffled: dict[str, Any],
    demo_bundles: dict[str, Bundle],
    what: str,
    tamper: Callable[[Bundle, Bundle], None],
    step: str,
    tmp_path: Path,
) -> None:
    bundle = copy.deepcopy(reshuffled["bundle"])  # a paid hand with a reshuffle and a drop
    other = next(iter(demo_bundles.values()))
    tamper(bundle, other)
    shown = in_browser(browser_page, bundle)
    assert shown["verdict"] == "failed", shown
    assert first_failing(shown["steps"]) == step, shown["steps"]
    code, result = in_node(bundle, tmp_path)
    assert code == 1
    assert first_failing(result["steps"]) == step


def forged(real_bundle: Bundle) -> Bundle:
    """A forged but self-consistent bundle of the same hand: a fresh server seed with its own
    commitment, the deal those seeds give, and every seat but the last in turn order dropping
    on its first turn (so the last one wins)."""
    b = copy.deepcopy(real_bundle)
    seed = hashlib.sha256(b"forger").digest()
    commitment = hashlib.sha256(seed).hexdigest()
    started = json_form.from_dict(events_of(b, "table.HandStarted")[0])
    rules = started.rule_set
    seeds = events_of(b, "table.SeedsLocked")[0]
    inputs = ShuffleInputs.of(
        seed,
        started.hand_id,
        {s["seat"]: bytes.fromhex(s["seed_hex"]) for s in seeds["client_seeds"]},
    )
    seats = [s.seat for s in started.seats]
    shoe: Shoe = rules.shoe
    d = deal(inputs, shoe, seats, started.dealer_seat, rules.hand_size)
    assert d.wild_cut is not None and d.first_open is not None  # an Indian deal turns up both
    cut = [i for i, e in enumerate(b["events"]) if e["event"]["type"] == "table.HandDealt"][0]
    version = b["events"][cut]["stream_version"]
    kept = b["events"][:cut]
    for e in kept:
        if e["event"]["type"] in ("table.SeedCommitted", "table.SeedsLocked"):
            e["event"]["commitment"] = commitment
    dealt = {
        "type": "table.HandDealt",
        "hands": [
            {"seat": h.seat, "cards": [json_form.card_to_str(c) for c in h.cards]} for h in d.hands
        ],
        "wild_cut": json_form.card_to_str(d.wild_cut),
        "first_open": json_form.card_to_str(d.first_open),
        "stock": [json_form.card_to_str(c) for c in d.stock],
        "stock_count": len(d.stock),
    }
    tail: list[dict[str, Any]] = [dealt]
    order = [h.seat for h in d.hands]
    for turn, seat in enumerate(order[:-1], start=1):
        tail.append({"type": "table.TurnStarted", "seat": seat, "turn_no": turn, "deadline_ms": 1})
        tail.append(
            {
                "type": "indian.PlayerDropped",
                "seat": seat,
                "turn_no": turn,
                "kind": "first",
                "points": rules.options.first_drop_points,
            }
        )
    winner = order[-1]
    points = {s: (0 if s == winner else rules.options.first_drop_points) for s in seats}
    accounts = {s.seat: s.account_id for s in started.seats}
    results = tuple(
        SeatResult(
            s, accounts[s], "won" if s == winner else "first_drop", points[s], d.hand_of(s), (), ()
        )
        for s in sorted(seats)
    )
    ended = HandEnded(
        winner_seat=winner, results=results, settlement=settle(rules, winner, points), at_ms=2
    )
    tail.append(json_form.to_dict(ended))
    b["events"] = kept + [{"stream_version": version + i, "event": e} for i, e in enumerate(tail)]
    b["server_seed_hex"] = seed.hex()
    return b


def test_a_forged_self_consistent_bundle_passes_alone_and_fails_against_the_players_record(
    browser_page: Any, demo_bundles: dict[str, Bundle], records: Path, tmp_path: Path
) -> None:
    real_bundle = next(iter(demo_bundles.values()))
    fake = forged(real_bundle)
    alone = in_browser(browser_page, fake)
    assert alone["verdict"] == "passed", alone["steps"]  # self-consistent: nothing differs
    record = record_of(records, real_bundle)
    shown = in_browser(browser_page, fake, record)
    assert shown["verdict"] == "failed"
    assert first_failing(shown["steps"]) == "seeds"
    seeds = next(s for s in shown["steps"] if s["id"] == "seeds")
    assert "the commitment you were shown before the deal" in seeds["text"]
    code, result = in_node(fake, tmp_path, record)
    assert code == 1 and first_failing(result["steps"]) == "seeds"


def test_a_seat_recorded_with_an_empty_seed_is_named(
    browser_page: Any, demo_bundles: dict[str, Bundle], reshuffled: dict[str, Any]
) -> None:
    late = [
        b
        for b in [*demo_bundles.values(), reshuffled["bundle"]]
        if any(s["seed_hex"] == "" for s in events_of(b, "table.SeedsLocked")[0]["client_seeds"])
    ]
    assert late, "the reshuffled hand has a seat that sent no seed"
    bundle = late[0]
    seats = [
        s["seat"]
        for s in events_of(bundle, "table.SeedsLocked")[0]["client_seeds"]
        if not s["seed_hex"]
    ]
    shown = in_browser(browser_page, bundle)
    seeds = next(s for s in shown["steps"] if s["id"] == "seeds")
    assert shown["verdict"] == "passed"
    assert f"seat{'s' if len(seats) > 1 else ''} {', '.join(map(str, seats))}" in seeds["text"]
    assert "could have chosen among decks" in seeds["text"]


def test_an_unknown_variant_is_reported_as_such_never_as_passed(
    browser_page: Any, reshuffled: dict[str, Any], tmp_path: Path
) -> None:
    bundle = copy.deepcopy(reshuffled["bundle"])
    bundle["variant"] = "gin-rummy"
    events_of(bundle, "table.HandStarted")[0]["rule_set"]["variant"] = "gin-rummy"
    shown = in_browser(browser_page, bundle)
    assert shown["verdict"] == "unknown"
    assert 'unknown variant "gin-rummy"' in shown["text"]
    code, result = in_node(bundle, tmp_path)
    assert code == 2 and not result["ok"] and not result["known"]


# -- a deal without a cut: the toy variant, which this page has no file for ---------------------

TOY_SERVER_SEED = hashlib.sha256(b"toy server seed").digest()


def toy_bundle() -> Bundle:
    """The proof bundle of a toy-variant hand (no wild cut, 5 cards from one 52-card deck, no
    jokers, its own Knocked event), played through the rules library as a host plays it (the
    variant found by name, decide and apply), dealt by the shuffle as the variant's deal layout
    asks, and assembled by the table service's own bundle code (``rummy_game.proof.bundle``;
    ``hand_proof`` decodes table-stream envelopes through ``stream_payloads``, which knows only the
    Indian game's wire events, so it cannot take a toy hand's envelopes yet)."""
    import toy_variant
    from rummy_game import proof
    from rummy_rules import commands as cmd
    from rummy_rules import registry
    from rummy_rules.events import SeatAccount

    variant = registry.lookup(toy_variant.TOY_NAME)
    rules = toy_variant.toy_rule_set(3, 10, 1000)
    seats, dealer, t0 = (0, 1, 2), 2, 1_800_000_000_000
    seeds = {0: b"\x11" * 8, 2: b"\x22" * 16}  # seat 1 sends none (late)
    commitment = hashlib.sha256(TOY_SERVER_SEED).hexdigest()
    state = variant.initial_state()
    events: list[tuple[int, Any]] = []

    def run(command: Any) -> None:
        nonlocal state
        for event in variant.decide(state, command):
            state = variant.apply(state, event)
            events.append((len(events) + 10, event))

    run(
        cmd.StartHand(
            hand_id="toy-hand-1",
            seats=tuple(SeatAccount(s, f"acct-toy-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rules,
            at_ms=t0,
        )
    )
    run(cmd.RecordSeedCommitment(commitment=commitment, at_ms=t0 + 1))
    for seat, seed in seeds.items():
        run(cmd.ContributeClientSeed(seat=seat, seed_hex=seed.hex(), at_ms=t0 + 2))
    run(cmd.TurnTimeout(turn_no=0, at_ms=t0 + 3))
    inputs = ShuffleInputs(
        TOY_SERVER_SEED, "toy-hand-1", tuple((s, seeds.get(s, b"")) for s in seats)
    )
    # the toy's deal turns up the first open card and cuts no wild card
    dealt = shuffled_deal(variant, rules, inputs, seats, dealer, t0 + 4)
    assert dealt.wild_cut is None
    run(dealt)
    for turn in (1, 2):  # two turns draw from the stock and discard what they drew
        seat = state.turn_seat
        run(cmd.DrawFromStock(seat=seat, turn_no=turn, at_ms=t0 + 10 * turn))
        run(
            cmd.Discard(
                seat=seat, turn_no=turn, card=state.seat(seat).cards[-1], at_ms=t0 + 10 * turn + 1
            )
        )
    run(toy_variant.Knock(seat=state.turn_seat, turn_no=3, at_ms=t0 + 40))
    assert variant.is_over(state)
    return proof.bundle(
        "table-toy",
        "toy-hand-1",
        variant=variant,
        shuffle_version="bb-shuffle-v1",
        rules_version=f"{rules.name}/{rules.version}",
        server_seed=TOY_SERVER_SEED,
        events=events,
    )


def test_a_deal_without_a_cut_verifies_its_commitment_shuffle_and_deal_and_names_what_is_unscored(
    browser_page: Any, tmp_path: Path
) -> None:
    bundle = toy_bundle()
    assert bundle["deal_shape"] == {"wild_cut": False, "upcard": True}
    from rummy_game.proof import canonical_json

    dealt = events_of(bundle, "table.HandDealt")[0]
    assert dealt["wild_cut"] is None and len(dealt["stock"]) == 52 - 3 * 5 - 1
    shown = in_browser(browser_page, canonical_json(bundle))  # as a player gets it
    # what was checked passed; what was not is said plainly, never "verified"
    assert shown["verdict"] == "unknown", shown
    steps = {s["id"]: s for s in shown["steps"]}
    assert [s["id"] for s in shown["steps"]] == ["bundle", "seeds", "deck", "moves", "scores"]
    assert steps["seeds"]["ok"] and steps["deck"]["ok"]
    assert not steps["moves"]["ok"] and not steps["scores"]["ok"]
    assert "no wild-card cut" in steps["deck"]["text"]
    assert "scores not checked here: no scorer for variant toy-knock" in shown["text"]
    assert "scores not checked here: no scorer for variant toy-knock" in steps["scores"]["text"]
    assert "Verified" not in shown["text"] and "passed" not in steps["scores"]["text"]
    assert "no client seed from seat 1" in steps["seeds"]["text"]
    assert shown["cards"] >= 3 * 5 + 1, "the deal is drawn as cards"
    schema = json.loads((ROOT / "web" / "verify" / "proof-bundle.schema.json").read_text())
    assert set(schema["required"]) <= set(bundle) <= set(schema["properties"])
    own = {e["event"]["type"] for e in bundle["events"]}
    own -= set(schema["$defs"]["event"]["properties"]["type"]["anyOf"][0]["enum"])
    assert own == {"toy.Knocked"}  # the toy's own event, allowed by the schema's second form
    code, result = in_node(bundle, tmp_path)
    assert code == 2 and result["verdict"] == "unknown" and not result["ok"]
    assert [s["id"] for s in result["steps"]] == ["bundle", "seeds", "deck"]
    assert all(s["ok"] for s in result["steps"])
    assert [u["id"] for u in result["unchecked"]] == ["moves", "scores"]


def _toy_swap_stock(b: Bundle) -> None:
    stock = events_of(b, "table.HandDealt")[0]["stock"]
    stock[0], stock[1] = stock[1], stock[0]


def _toy_cut_claimed(b: Bundle) -> None:
    """A cut made up from the top of the stock, as if the variant cut a wild card."""
    dealt = events_of(b, "table.HandDealt")[0]
    dealt["wild_cut"] = dealt["stock"].pop(0)


def _toy_shape_claims_a_cut(b: Bundle) -> None:
    """The bundle re-labelled as a deal with a cut: the cards no longer lie where the seeds say."""
    b["deal_shape"] = {"wild_cut": True, "upcard": True}


def _toy_other_seed(b: Bundle) -> None:
    events_of(b, "table.SeedsLocked")[0]["client_seeds"][0]["seed_hex"] = "00"


TOY_TAMPERS: list[tuple[str, Callable[[Bundle], None], str]] = [
    ("two stock cards swapped", _toy_swap_stock, "deck"),
    ("a wild-card cut the variant does not make", _toy_cut_claimed, "deck"),
    ("a deal shape with a cut", _toy_shape_claims_a_cut, "deck"),
    ("a changed client seed", _toy_other_seed, "seeds"),
]


@pytest.mark.parametrize(("what", "tamper", "step"), TOY_TAMPERS, ids=[t[0] for t in TOY_TAMPERS])
def test_a_tampered_bundle_of_a_deal_without_a_cut_is_refused(
    browser_page: Any,
    what: str,
    tamper: Callable[[Bundle], None],
    step: str,
    tmp_path: Path,
) -> None:
    bundle = toy_bundle()
    tamper(bundle)
    shown = in_browser(browser_page, bundle)
    assert shown["verdict"] == "failed", shown
    assert first_failing(shown["steps"]) == step, shown["steps"]
    assert "Not verified" in shown["text"]
    code, result = in_node(bundle, tmp_path)
    assert code == 1 and result["verdict"] == "failed"
    assert first_failing(result["steps"]) == step


# -- GetHandProof and rummy proof ---------------------------------------------------------------


def test_get_hand_proof_serves_the_seated_players_and_operators_the_bundle_rummy_proof_writes(
    rummy_stack: RunningStack, reshuffled: dict[str, Any], tmp_path: Path
) -> None:
    assert reshuffled["text"] == reshuffled["operator_text"]
    assert "has not ended" in reshuffled["running"]
    out = tmp_path / "proof.json"
    result = CliRunner().invoke(
        main,
        [
            "proof",
            "--hand",
            reshuffled["hand_id"],
            "--bootstrap",
            rummy_stack.kafka_bootstrap,
            "--topic-prefix",
            rummy_stack.topic_prefix,
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().strip() == reshuffled["text"]
    bundle = reshuffled["bundle"]
    assert bundle["format"] == "bb-hand-proof/1"
    assert (
        hashlib.sha256(bytes.fromhex(bundle["server_seed_hex"])).hexdigest()
        == events_of(bundle, "table.SeedCommitted")[0]["commitment"]
    )
    channel = open_channel(rummy_stack.endpoints.table)
    stub = api_grpc.TableServiceStub(channel)
    for token, hand, code in (
        (reshuffled["stranger"], reshuffled["hand_id"], grpc.StatusCode.PERMISSION_DENIED),
        (reshuffled["stranger"], "no-such-hand", grpc.StatusCode.NOT_FOUND),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            proof_call(stub, reshuffled["table_id"], hand, token)
        assert caught.value.code() == code
    channel.close()


def test_the_schema_in_the_repository_describes_the_bundle(reshuffled: dict[str, Any]) -> None:
    schema = json.loads((ROOT / "web" / "verify" / "proof-bundle.schema.json").read_text())
    bundle = reshuffled["bundle"]
    assert set(schema["required"]) <= set(bundle)
    assert set(bundle) <= set(schema["properties"])
    event_types = {e["event"]["type"] for e in bundle["events"]}
    assert event_types <= set(schema["$defs"]["event"]["properties"]["type"]["anyOf"][0]["enum"])
    pattern = schema["$defs"]["card"]["pattern"]
    dealt = events_of(bundle, "table.HandDealt")[0]
    assert all(re.fullmatch(pattern, c) for c in dealt["stock"])


# -- gin: the page's own rules and scorer (gin.js, gin-score.js) on in-process gin hands ----------


def _gin(name: str, *, knock: bool = True, sleeper: int | None = None) -> Bundle:
    from gin_bundles import gin_hand

    return gin_hand(name, knock=knock, sleeper=sleeper)[0]


def _gin_scored(bundle: Bundle) -> dict[str, Any]:
    return events_of(bundle, "gin.HandScored")[0]


GIN_HANDS = [
    ("a knock with a lay-off", "h0", True, "knock"),
    ("a knock with two lay-offs", "h3", True, "knock"),
    ("an undercut", "h25", True, "undercut"),
    ("the wall", "h0", False, None),
    ("a forfeit on missed turns", "h5", True, "forfeit"),
]


@pytest.mark.parametrize(
    ("what", "name", "knock", "outcome"), GIN_HANDS, ids=[h[0] for h in GIN_HANDS]
)
def test_a_genuine_gin_hand_verifies_every_step_in_chromium_and_under_node(
    browser_page: Any, what: str, name: str, knock: bool, outcome: str | None, tmp_path: Path
) -> None:
    from rummy_game.proof import canonical_json

    bundle = _gin(name, knock=knock, sleeper=0 if outcome == "forfeit" else None)
    assert bundle["variant"] == "gin" and bundle["deal_shape"] == {
        "wild_cut": False,
        "upcard": True,
    }
    dealt = events_of(bundle, "table.HandDealt")[0]
    assert [len(h["cards"]) for h in dealt["hands"]] == [10, 10] and len(dealt["stock"]) == 31
    if outcome is None:
        assert events_of(bundle, "gin.WallReached") and not events_of(bundle, "gin.Knocked")
    elif outcome == "forfeit":  # seat 0 times out: the offer passed for it, then 3 in a row
        assert events_of(bundle, "gin.SeatForfeited")[0]["misses"] == 3
        assert len(events_of(bundle, "gin.UpcardPassed")) == 2
    else:
        assert _gin_scored(bundle)["outcome"] == outcome
    shown = in_browser(browser_page, canonical_json(bundle))
    assert shown["verdict"] == "passed", shown
    assert [s["id"] for s in shown["steps"]] == ["bundle", "seeds", "deck", "moves", "scores"]
    assert all(s["ok"] for s in shown["steps"]), shown["steps"]
    deck = next(s for s in shown["steps"] if s["id"] == "deck")["text"]
    assert "2 hands of 10, no wild-card cut, first open card" in deck
    scores = next(s for s in shown["steps"] if s["id"] == "scores")["text"]
    said = {None: "the wall: a drawn deal", "forfeit": "seat 0 forfeited after 3 missed turns"}
    assert said.get(outcome, f"{outcome} by seat") in scores
    assert shown["cards"] >= 2 * 10 + 1, "the deal is drawn as cards"
    code, result = in_node(bundle, tmp_path)
    assert code == 0 and result["ok"] and result["known"] and result["verdict"] == "passed"
    assert_money_shown(shown, result, bundle)
    printed = in_node_text(bundle, tmp_path)
    assert money_in_tokens(bundle)[-1][1] + " tokens" in printed and "hundredths" not in printed
    schema = json.loads((ROOT / "web" / "verify" / "proof-bundle.schema.json").read_text())
    ended = next(
        e
        for e in schema["$defs"]["event"]["allOf"]
        if e["if"]["properties"]["type"]["const"] == "table.HandEnded"
    )
    pattern = ended["then"]["properties"]["results"]["items"]
    assert all(
        re.fullmatch(pattern["properties"]["outcome"]["pattern"], r["outcome"])
        for r in events_of(bundle, "table.HandEnded")[0]["results"]
    )


def test_a_knocker_that_named_an_equally_low_grouping_verifies_by_the_knocks_flag(
    tmp_path: Path,
) -> None:
    """House plan "Gin family": the knocker may name its melds; then the defender lays off onto
    those, even when the server would have shown another of its best groupings. The knock says
    so (GinKnocked.melds_named), and the verifier reads it: with the same deadwood as the best,
    the melds alone cannot tell a named grouping from the server's."""
    from gin_bundles import gin_hand

    named = gin_hand("named-14", name_melds=True)[0]
    arranged = gin_hand("named-14")[0]
    knock, server = events_of(named, "gin.Knocked")[0], events_of(arranged, "gin.Knocked")[0]
    assert knock["melds_named"] is True and server["melds_named"] is False
    assert knock["deadwood"] == server["deadwood"] and knock["melds"] != server["melds"]
    assert _gin_scored(named)["defender_deadwood"] < _gin_scored(arranged)["defender_deadwood"]
    for bundle in (named, arranged):
        code, result = in_node(bundle, tmp_path)
        assert code == 0 and result["verdict"] == "passed", result
    # flagged as the server's arrangement, the same melds are not the server's choice
    events_of(named, "gin.Knocked")[0]["melds_named"] = False
    code, result = in_node(named, tmp_path)
    assert code == 1 and first_failing(result["steps"]) == "moves", result
    assert "the server must show the one that leaves the most" in json.dumps(result)


def _gin_knocker_card(b: Bundle) -> None:
    """The knocker's first meld (the set of twos) shows the defender's 2S instead of its 2C: still a
    meld, but not of the knocker's cards."""
    knocked = events_of(b, "gin.Knocked")[0]
    assert knocked["melds"][0]["cards"][0] == "2C:0" and "2S:0" in _gin_scored(b)["defender_cards"]
    knocked["melds"][0]["cards"][0] = "2S:0"


def _gin_layoff_elsewhere(b: Bundle) -> None:
    """The defender's lay-off is put onto another of the knocker's melds, where it fits not."""
    _gin_scored(b)["layoffs"][0]["meld"] = 1


def _gin_points(b: Bundle) -> None:
    _gin_scored(b)["points"] += 1


def _gin_charge(b: Bundle) -> None:
    """The result charges the loser more than the score (its settlement made to agree)."""
    ended = events_of(b, "table.HandEnded")[0]
    loser = next(r for r in ended["results"] if r["outcome"] == "lost")
    loser["points"] += 5


def _gin_face_down_taken(b: Bundle) -> None:
    """The knocker lays down a card it does not hold."""
    knocked = events_of(b, "gin.Knocked")[0]
    knocked["face_down"] = _gin_scored(b)["defender_cards"][1]


def _gin_forfeit_early(b: Bundle) -> None:
    """A forfeit claimed after two missed turns: the last timeout before it removed."""
    timed = [e for e in b["events"] if e["event"]["type"] == "table.TurnTimedOut"]
    b["events"].remove(timed[-1])
    events_of(b, "gin.SeatForfeited")[0]["misses"] = 2


def test_a_forfeit_before_the_rule_sets_missed_turns_fails(
    browser_page: Any, tmp_path: Path
) -> None:
    bundle = _gin("h5", sleeper=0)
    _gin_forfeit_early(bundle)
    named = "seat 0 forfeited after 2 missed turns in a row (shown 2); the rule set's limit is 3"
    shown = in_browser(browser_page, bundle)
    assert shown["verdict"] == "failed" and first_failing(shown["steps"]) == "moves", shown
    assert named in next(s for s in shown["steps"] if not s["ok"])["text"]
    code, result = in_node(bundle, tmp_path)
    assert code == 1 and first_failing(result["steps"]) == "moves"


GIN_TAMPERS: list[tuple[str, Callable[[Bundle], None], str, str]] = [
    ("the knocker's card", _gin_knocker_card, "moves", "which is not in its hand"),
    ("a lay-off", _gin_layoff_elsewhere, "moves", "not a meld"),
    (
        "the hand's points",
        _gin_points,
        "moves",
        "the hand is scored 23 points; the rules make it 22",
    ),
    (
        "the loser's charge",
        _gin_charge,
        "scores",
        "seat 0 is charged 27 points; the score makes it 22",
    ),
    ("the face-down card", _gin_face_down_taken, "moves", "face down, which is not in its hand"),
]


@pytest.mark.parametrize(
    ("what", "tamper", "step", "named"), GIN_TAMPERS, ids=[t[0] for t in GIN_TAMPERS]
)
def test_a_tampered_gin_hand_fails_naming_what_differs(
    browser_page: Any,
    what: str,
    tamper: Callable[[Bundle], None],
    step: str,
    named: str,
    tmp_path: Path,
) -> None:
    bundle = _gin("h0")  # seat 1 knocks with 7; seat 0 lays 2S off onto 2C 2D 2H: 22 points
    assert _gin_scored(bundle)["points"] == 22
    tamper(bundle)
    shown = in_browser(browser_page, bundle)
    assert shown["verdict"] == "failed", shown
    assert first_failing(shown["steps"]) == step, shown["steps"]
    failing = next(s for s in shown["steps"] if not s["ok"])
    assert named in failing["text"], failing
    assert "Not verified" in shown["text"]
    code, result = in_node(bundle, tmp_path)
    assert code == 1 and result["verdict"] == "failed"
    assert first_failing(result["steps"]) == step
    assert named in next(s for s in result["steps"] if not s["ok"])["problem"]


def test_a_gin_hands_changed_money_is_named_in_tokens(browser_page: Any, tmp_path: Path) -> None:
    """A commission or a seat's net changed by one hundredth: the page and cli.mjs name both
    amounts in tokens (the bundle's, and the one its points make), and show no money table."""
    genuine = _gin("h0")  # 22 points at 0.10 a point and 5%: the loser pays 2.20
    st = events_of(genuine, "table.HandEnded")[0]["settlement"]
    rules = events_of(genuine, "table.HandStarted")[0]["rule_set"]
    loser = next(x for x in st["lines"] if x["amount_hundredths"] < 0)
    paid = -loser["amount_hundredths"]
    commission = paid * rules["commission_bps"] // 10_000
    assert commission == st["commission_hundredths"] > 0
    percent = commission_text(rules["commission_bps"])

    def more_commission(b: Bundle) -> None:
        events_of(b, "table.HandEnded")[0]["settlement"]["commission_hundredths"] += 1

    def more_loss(b: Bundle) -> None:
        events_of(b, "table.HandEnded")[0]["settlement"]["lines"][0]["amount_hundredths"] -= 1

    first = st["lines"][0]["amount_hundredths"]
    cases = [
        (
            more_commission,
            f"the commission is {tokens(commission + 1)} tokens; {percent} of the losers' "
            f"{tokens(paid)} tokens, rounded down to the hundredth, is {tokens(commission)} tokens",
        ),
        (
            more_loss,
            f"seat {st['lines'][0]['seat']}'s net is {tokens(first - 1, signed=True)} tokens; "
            f"the points make it {tokens(first, signed=True)} tokens",
        ),
    ]
    for tamper, named in cases:
        bundle = copy.deepcopy(genuine)
        tamper(bundle)
        shown = in_browser(browser_page, bundle)
        assert shown["verdict"] == "failed" and first_failing(shown["steps"]) == "scores", shown
        assert named in next(s for s in shown["steps"] if not s["ok"])["text"], shown["steps"]
        assert shown["money"] == [], "money that differs is not shown as the hand's"
        code, result = in_node(bundle, tmp_path)
        assert code == 1 and result["money"] is None
        assert named in next(s for s in result["steps"] if not s["ok"])["problem"]
        assert named in in_node_text(bundle, tmp_path)


KEPT_OLD = [(p, row) for p in KEPT_INDIAN for row in INDIAN_BUNDLE_SHAPES]


@pytest.mark.parametrize(
    ("path", "old_shape"), KEPT_OLD, ids=[f"{p.name} ({row})" for p, row in KEPT_OLD]
)
def test_a_kept_indian_bundle_verifies_in_chromium_as_kept_and_in_an_old_shape(
    browser_page: Any, path: Path, old_shape: str
) -> None:
    """A bundle kept from before (tests/data/kept), and the same rewritten in an old shape that
    the page's upcast reads (a row of docs/rules/event-tags.md#deprecated: its rule sets'
    options under ``indian``, untagged; no ``deal_shape``): every step passes, the same steps
    alike."""
    kept = json.loads(path.read_text(encoding="utf-8"))
    old = INDIAN_BUNDLE_SHAPES[old_shape](kept)
    assert old != kept
    shown = [in_browser(browser_page, b) for b in (kept, old)]
    for one in shown:
        assert one["verdict"] == "passed" and all(s["ok"] for s in one["steps"]), one
    assert shown[0] == shown[1]
