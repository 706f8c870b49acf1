"""``rummy demo``: bots play real hands through the public gRPC API, and the books are checked.

:func:`play` does the work against running services (the e2e tests call it with their own stack);
the ``demo`` command (:mod:`.command`) starts the stack (:mod:`rummy_ops.stack_command`) around it.

1. Grants House Tokens to every bot account through the ledger's operator API (``Grant``, with an
   idempotency key per account and run).
2. Opens the tables of its games (:func:`~rummy_ops.demo.plans.games`; the command's default,
   :func:`~rummy_ops.demo.plans.default_games`, is every game: the points tables of
   :data:`DEFAULT_TABLES`, 4, 6 and 8 seats, one free, the others at different point values and
   commission rates, and one table of each match format, which plays one match to its end;
   :class:`DemoOptions` alone holds the points tables) and seats one bot per seat, each with its
   own player token. One bot at each paid points table first sets itself a daily loss limit
   (``SetLossLimit``, as a player does; ``TablePlan.loss_limited``): once a lost hand brings it
   within a reservation of it, the ledger holds its seat back ("not dealt in") and the others
   play on.
3. Bots play until every points table has finished its share of the hands and every format
   table its match (one line per match too); an operator watch on each
   table (:mod:`.watch`) records every hand's ``HandEnded`` and prints one line per hand (table,
   hand, winner, each seat's points, commission, net token movement), with a progress bar.
4. At the end: every account's balance, the house's commission total, the conservation check
   (the sum of the bots' balances plus the commission equals the tokens granted), how many hands
   ended each way, the slowest player action (:mod:`.report`, :mod:`.books`), and the replay
   verdict (:func:`replay_verdict`, :mod:`.verify`), with how many seats a limit held back, each
   re-checked against the limits in force then (:mod:`rummy_ops.replay.limits`).

Its modules by job: :mod:`.plans` (the tables and options), :mod:`.endpoints`, :mod:`.run`,
:mod:`.watch`, :mod:`.books` (the ledger's side), :mod:`.report`, :mod:`.verify` (replay and
proofs), :mod:`.command`. Money is in hundredths of a House Token throughout and printed as
tokens with two decimals.
"""

from rummy_ops.demo.books import HOUSE_COMMISSION_ACCOUNT
from rummy_ops.demo.endpoints import Endpoints, stack_endpoints
from rummy_ops.demo.plans import DEFAULT_TABLES, DemoOptions, TablePlan
from rummy_ops.demo.report import DemoReport, HandRecord
from rummy_ops.demo.run import OPERATOR_ACCOUNT, play
from rummy_ops.demo.verify import replay_verdict, verify_demo

__all__ = [
    "DEFAULT_TABLES",
    "HOUSE_COMMISSION_ACCOUNT",
    "OPERATOR_ACCOUNT",
    "DemoOptions",
    "DemoReport",
    "Endpoints",
    "HandRecord",
    "TablePlan",
    "play",
    "replay_verdict",
    "stack_endpoints",
    "verify_demo",
]
