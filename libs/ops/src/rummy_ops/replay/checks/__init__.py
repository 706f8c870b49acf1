"""Replaying one hand: fold its recorded events through the rules library and check them against
evidence the fold did not produce (``docs/rules/promises.md#disputes``,
``docs/rules/promises.md#replay-is-exact``, ``docs/rules/promises.md#deal-fixed-before-seen``).

Checks, each tied to the event it is about (a :class:`Finding` names the event's stream version,
id and type):

- ``stream``: the hand's events stand in strictly increasing stream versions.
- ``rules``: every recorded event is what ``decide`` gives for the command it records, and the
  events derived by the table (TurnStarted, SeedWindowOpened, SeedsLocked, StockExhausted, drop
  points, HandEnded with every seat's points and the settlement) equal the re-derivation. The fold
  must accept every event (``decide`` raising RuleViolation names the event the rules refuse).
- ``commitment``: the revealed server seed's SHA-256 equals the commitment, and the commitment was
  recorded before HandDealt.
- ``deal``: the deal recomputed with ``rummy_rules.shuffle`` from the revealed seed and the locked
  client seeds equals HandDealt (checked only once the seed is proven by the commitment).
- ``reshuffle``: each StockReshuffled equals the reshuffle sub-stream of the set-aside cards.
- ``ledger-event``: the ledger's HandSettled (re-recorded in the stream) moves what HandEnded says.
- ``settlement-refused``: the ledger refused the hand's settlement (its SettlementRefused,
  re-recorded in the stream): the hand is void, a failure reported with the ledger's reason.
- ``ledger``: the journal rows of the hand in PostgreSQL (see :mod:`rummy_ops.replay.ledger`); an
  ended hand with no settlement in the journal is a failure once it ended more than the grace
  (``settle_grace_s``) ago, a note before.

Modules by what they check: :mod:`.rules`, :mod:`.fairness` (commitment, deal, reshuffle),
:mod:`.settlement` (ledger-event, settlement-refused, ledger); :mod:`.record` holds the
records and verdicts, :mod:`.mismatch` how a difference is told, :mod:`.hand` the replay of one
hand that runs them all. The mapping between payloads and rules events is
:mod:`rummy_game.stream_payloads`'s.
"""

from rummy_ops.replay.checks.hand import replay_hand
from rummy_ops.replay.checks.mismatch import difference
from rummy_ops.replay.checks.record import (
    DEFAULT_SETTLE_GRACE_S,
    Finding,
    HandReplay,
    LedgerFetch,
    LedgerRows,
    short_type,
)
from rummy_ops.replay.checks.rules import command_for

__all__ = [
    "DEFAULT_SETTLE_GRACE_S",
    "Finding",
    "HandReplay",
    "LedgerFetch",
    "LedgerRows",
    "command_for",
    "difference",
    "replay_hand",
    "short_type",
]
