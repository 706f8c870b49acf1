"""The names the ledger gives a match's money purposes, beside the format's (``rummy_rules.formats``
``MoneyReserved.purpose``): the one table of them, for the match's payloads
(:mod:`rummy_game.match_payloads`) and the table's domain, which keys the holds it awaits and
words its reasons by the ledger's names. Plain strings: no wire type is imported here."""

from __future__ import annotations

#: The ledger's purpose of a rejoin's entry.
REJOIN = "rejoin"
#: The format's MoneyReserved purpose -> the ledger's name of it (a game's stakes are ``stake``).
LEDGER_PURPOSE = {"entry": "entry", "rejoin": REJOIN, "game": "stake"}
#: The ledger's name of a purpose -> the format's.
FORMAT_PURPOSE = {v: k for k, v in LEDGER_PURPOSE.items()}
