"""An example player client of the table service: one seat at an Indian points table.

It takes a seat, follows its own view (``WatchTable``), contributes a fresh client seed for every
hand it is dealt into (keeping the commitment it was shown and the seed it sent), and on its turn
draws from the stock and discards its costliest loose card, until the hand ends (someone
declares or everyone else drops). It has no judge of its own cards, so it never declares: from
turn ``--give-up-at`` on it drops instead of drawing (so two of these at one table end their hands
too). Then it fetches the hand's proof bundle and saves it beside its
own record, for the browser verifier (``web/verify``). Calls go through
``rummy_table.contract.TableRouter``, which follows a table's redirect to the instance serving it.

It imports the generated stubs (``rummy.*_pb2``, with grpc and protobuf) and that router only:
what a client of this API needs, nothing of the services or the ops tools. Walked through in
``docs/client.md``::

    .venv/bin/python docs/examples/client.py --table 127.0.0.1:15051 \
        --token-file player.token --table-id <table id> --out hands/

Exit status: 0 once ``--hands`` hands it was dealt into have ended (their files saved); 1 with
a message when a call is refused (a bad token, an unknown table, a full table); 2 for bad
arguments (a token file it cannot read); 130 when stopped (Ctrl-C, SIGTERM). On every exit once
seated it stands up again (``LeaveTable``, best effort), so the table does not go on playing its
seat without it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
from google.protobuf import text_format

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_table.contract import TableRouter

#: Seconds one call may take (a call the router retries after a redirect or a handover included).
CALL_TIMEOUT_S = 30.0
#: How long to ask for a hand's proof bundle while the server seed is not revealed yet (seconds).
PROOF_WAIT_S = 60.0
#: How long the parting ``LeaveTable`` may take, on the way out (seconds).
LEAVE_TIMEOUT_S = 10.0
#: Phases of a hand being played: a hand seen in one of them with this seat dealt in is its own.
BEGUN = (api.HAND_PHASE_SEEDING, api.HAND_PHASE_DEALING, api.HAND_PHASE_PLAYING)


def new_request_id() -> str:
    """A fresh ``client_request_id``: sending the same one again is answered as the first time."""
    return str(uuid.uuid4())


def card_points(card: cards_pb2.Card, wild_cut: cards_pb2.Card) -> int:
    """What ``card`` counts loose (docs/rules/cards.md#card-points): A, K, Q, J and 10 count 10,
    2 to 9 their number, a printed joker and any card of the wild cut's rank 0."""
    rank = card.face[:-1]
    if card.face == "JK" or (wild_cut.face != "JK" and rank == wild_cut.face[:-1]):
        return 0
    return 10 if rank in ("A", "K", "Q", "J", "10") else int(rank)


def tokens(hundredths: int) -> str:
    """A seat's net in House Tokens, signed, two decimals: 167 -> "+1.67", -400 -> "-4.00"."""
    sign = "-" if hundredths < 0 else "+"
    return f"{sign}{abs(hundredths) // 100}.{abs(hundredths) % 100:02d}"


def partners(card: cards_pb2.Card, cards: list[cards_pb2.Card]) -> int:
    """Cards of ``cards`` that could share a meld with ``card``: the same rank, or the same suit
    one or two ranks away."""
    order = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    if card.face == "JK":
        return 0
    rank, suit = order.index(card.face[:-1]), card.face[-1]
    count = 0
    for other in cards:
        if other.index == card.index or other.face == "JK":
            continue
        gap = abs(order.index(other.face[:-1]) - rank)
        if gap == 0 or (other.face[-1] == suit and gap <= 2):
            count += 1
    return count


class Client:
    """One player at one table: ``router`` reaches the table service, ``token`` is the player's
    bearer token, ``out`` the folder for the hands' proof bundles and the player's record."""

    def __init__(
        self, router: TableRouter, token: str, table_id: str, out: Path, give_up_at: int
    ) -> None:
        self.router = router
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.table_id = table_id
        self.out = out
        self.out.mkdir(parents=True, exist_ok=True)
        self.give_up_at = give_up_at
        self.seat: int | None = None  # its seat once seated, until it left
        self.seeded: set[str] = set()  # hands this client sent its seed for
        self.begun: set[str] = set()  # hands it saw begin with its seat dealt in
        self.ended: list[str] = []  # hands dealt in that ended, their proofs saved
        self.acted: tuple[str, int, bool] = ("", 0, False)  # (hand, turn, has drawn) played

    def call(self, method: str, request: object) -> object:
        """``TableService.<method>`` on the instance serving the table, following redirects."""
        return self.router.call(method, request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    def take_seat(self) -> int:
        """Sit at any free seat; returns its number."""
        reply = self.call(
            "TakeSeat",
            api.TakeSeatRequest(table_id=self.table_id, client_request_id=new_request_id()),
        )
        assert isinstance(reply, api.TakeSeatResponse)
        self.seat = reply.seat
        return reply.seat

    def leave(self) -> None:
        """Stand up again if seated (free between hands, a drop during one), best effort: on the
        way out of any exit, so a refusal or an error does not leave the seat playing on."""
        if self.seat is None:
            return
        request = api.LeaveTableRequest(table_id=self.table_id, client_request_id=new_request_id())
        try:
            self.router.call("LeaveTable", request, metadata=self.metadata, timeout=LEAVE_TIMEOUT_S)
            print(f"left seat {self.seat}")
        except grpc.RpcError as error:
            print(f"could not leave: {error.code().name}: {error.details()}", file=sys.stderr)
        self.seat = None

    def views(self) -> Iterator[api.PlayerView]:
        """This player's view of the table, a new one after every change, for ever: a broken
        stream is opened again where the last view left off, at the instance serving the table
        now (an UNAVAILABLE naming another owner moves the router there)."""
        seen = 0
        while True:
            address = self.router.address_for(self.table_id)
            request = api.WatchTableRequest(table_id=self.table_id, after_stream_version=seen)
            stream = self.router.stub(address).WatchTable(request, metadata=self.metadata)
            try:
                for response in stream:
                    seen = response.view.stream_version
                    yield response.view
            except grpc.RpcError as error:
                if not self.router.follow(error, self.table_id, address):
                    raise  # not UNAVAILABLE: a bad token, an unknown table
                if self.router.address_for(self.table_id) == address:
                    time.sleep(0.5)  # no owner named (a handover): watch again shortly
            finally:
                stream.cancel()

    def play(self, hands: int) -> None:
        """Play until ``hands`` hands this player was dealt into have ended."""
        for view in self.views():
            dealt_in = view.HasField("my_seat") and any(
                s.seat == view.my_seat and s.dealt_in for s in view.seats
            )
            if not dealt_in:
                continue  # seated between hands, or sitting this one out
            if view.phase in BEGUN:
                self.begun.add(view.hand_id)
            elif view.hand_id not in self.begun:
                continue  # a hand that ended before this client sat down (its seat's former player)
            if view.phase == api.HAND_PHASE_SEEDING and view.hand_id not in self.seeded:
                self.contribute_seed(view)
            elif view.phase == api.HAND_PHASE_PLAYING and view.legal_moves:
                if self.acted != (view.hand_id, view.turn_no, view.has_drawn):
                    self.acted = (view.hand_id, view.turn_no, view.has_drawn)
                    self.play_turn(view)
            elif view.phase == api.HAND_PHASE_ENDED and view.hand_id not in self.ended:
                self.hand_ended(view)
                if len(self.ended) >= hands:
                    return

    def keep(self, view: api.PlayerView, **fact: str) -> None:
        """Append one fact of this hand to ``record.jsonl``, in the verifier's record format."""
        account = next(s.account_id for s in view.seats if s.seat == view.my_seat)
        line: dict[str, str | int] = {"account_id": account, "table_id": self.table_id}
        line.update(hand_id=view.hand_id, seat=view.my_seat, **fact)
        with open(self.out / "record.jsonl", "a", encoding="utf-8") as record:
            record.write(json.dumps(line, sort_keys=True) + "\n")

    def contribute_seed(self, view: api.PlayerView) -> None:
        """Keep the commitment shown, then send a fresh 32-byte seed and keep it too."""
        self.seeded.add(view.hand_id)
        self.keep(view, commitment=view.server_commitment_sha256.hex())
        seed = os.urandom(32)
        request = api.ContributeSeedRequest(
            table_id=self.table_id,
            hand_id=view.hand_id,
            client_request_id=new_request_id(),
            client_seed=seed,
        )
        try:
            self.call("ContributeSeed", request)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            seed = b""  # the window closed first: the deal uses the empty seed for this seat
        self.keep(view, seed_hex=seed.hex())
        print(f"hand {view.hand_id}: commitment {view.server_commitment_sha256.hex()}")

    def choose(self, view: api.PlayerView) -> api.LegalMove:
        """The move to make among the view's legal ones: before drawing, the stock (the pile
        when the stock is empty), or from turn ``give_up_at`` on the variant's drop; after it,
        the costliest card with no partner in the hand (any costliest card when every card has
        one; a joker, worth 0, only when nothing else may go)."""
        draws = [m for m in view.legal_moves if m.WhichOneof("move") == "draw"]
        drops = [m for m in view.legal_moves if m.command.Is(indian.Drop.DESCRIPTOR)]
        if drops and view.turn_no >= self.give_up_at:
            return drops[0]
        if draws:
            stock = [m for m in draws if m.draw == table_events.DRAW_SOURCE_STOCK]
            return (stock or draws)[0]
        discards = [m for m in view.legal_moves if m.WhichOneof("move") == "discard"]
        hand = list(view.my_cards)
        return max(
            discards,
            key=lambda m: (
                card_points(m.discard, view.wild_cut) > 0,
                partners(m.discard, hand) == 0,
                card_points(m.discard, view.wild_cut),
            ),
        )

    def play_turn(self, view: api.PlayerView) -> None:
        """Send the chosen move as the RPC its arm names, for this hand and turn."""
        move = self.choose(view)
        hand, turn = view.hand_id, view.turn_no
        arm = move.WhichOneof("move")
        try:
            if arm == "draw":
                self.call(
                    "DrawCard",
                    api.DrawCardRequest(
                        table_id=self.table_id,
                        hand_id=hand,
                        turn_no=turn,
                        client_request_id=new_request_id(),
                        source=move.draw,
                    ),
                )
            elif arm == "discard":
                self.call(
                    "DiscardCard",
                    api.DiscardCardRequest(
                        table_id=self.table_id,
                        hand_id=hand,
                        turn_no=turn,
                        client_request_id=new_request_id(),
                        card=move.discard,
                    ),
                )
                print(f"turn {turn}: discarded {move.discard.face}")
            else:  # the variant's own command (a declare, a drop), sent as it was listed
                request = api.PlayRequest(
                    table_id=self.table_id,
                    hand_id=hand,
                    turn_no=turn,
                    client_request_id=new_request_id(),
                    command=move.command,
                )
                reply = self.call("Play", request)
                assert isinstance(reply, api.PlayResponse)
                for answer in (indian.DeclareAnswer(), indian.DropAnswer()):
                    if reply.answer.Unpack(answer):  # False: not this type
                        shown = text_format.MessageToString(answer, as_one_line=True)
                        print(f"turn {turn}: {type(answer).__name__} {shown}")
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            print(f"turn {turn}: {error.details()} (the hand moved on first)")

    def hand_ended(self, view: api.PlayerView) -> None:
        """Print the result, then save the hand's proof bundle once its seed is revealed."""
        result = view.result
        mine = next(r for r in result.results if r.seat == view.my_seat)
        net = sum(s.amount_hundredths for s in result.settlement if s.seat == view.my_seat)
        print(
            f"hand {view.hand_id} ended: seat {result.winner_seat} won; "
            f"seat {view.my_seat} (me): {mine.outcome}, {mine.points} points, "
            f"net {tokens(net)} tokens"
        )
        request = api.GetHandProofRequest(table_id=self.table_id, hand_id=view.hand_id)
        deadline = time.monotonic() + PROOF_WAIT_S
        while True:
            try:
                reply = self.call("GetHandProof", request)
                break
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)  # the server seed is not revealed yet
        assert isinstance(reply, api.GetHandProofResponse)
        path = self.out / f"{view.hand_id}.json"
        path.write_text(reply.bundle_json, encoding="utf-8")
        self.ended.append(view.hand_id)
        print(f"proof: node web/verify/cli.mjs {path} --record {self.out / 'record.jsonl'}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="a table-service instance, host:port")
    token = parser.add_mutually_exclusive_group(required=True)
    token.add_argument("--token", help="the player's bearer token")
    token.add_argument("--token-file", type=Path, help="a file holding the token")
    parser.add_argument("--table-id", required=True, help="the table to sit at")
    parser.add_argument("--out", type=Path, default=Path("hands"), help="where to save hands")
    parser.add_argument("--hands", type=int, default=1, help="hands to play, then leave")
    parser.add_argument("--give-up-at", type=int, default=100, help="drop from this turn on")
    args = parser.parse_args(argv)
    if args.token_file is not None:
        try:
            args.token = args.token_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            parser.error(f"--token-file {args.token_file}: {error.strerror or error}")
    return args


def stopped(signum: int, frame: object) -> None:
    """SIGTERM stops the client as Ctrl-C does, through its ``finally`` (it leaves its seat)."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, stopped)
    router = TableRouter(args.table)
    client = Client(router, args.token, args.table_id, args.out, args.give_up_at)
    try:
        seat = client.take_seat()
        print(
            f"seat {seat} at table {args.table_id}, served by {router.address_for(args.table_id)}"
        )
        client.play(args.hands)
    except grpc.RpcError as error:
        print(f"refused: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 130
    finally:
        client.leave()  # on every way out: a seat left taken would play on without its player
        router.close()
    print(f"done: {len(client.ended)} hand(s) saved in {args.out}, {router.redirects} redirect(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
