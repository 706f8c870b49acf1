"""The player's own record of what it saw live: the commitment shown before each deal and the
client seed it sent (or that it sent none in time). The verifier page (``web/verify/``) takes this
file as a second input and checks a hand's proof bundle against it, so a forged but
self-consistent bundle (a fresh seed with its hash, a matching deck and moves) is caught.

Format: JSON lines, appended as the hand goes, one object per fact::

    {"account_id": "...", "table_id": "...", "hand_id": "...", "seat": 2, "commitment": "<hex>"}
    {"account_id": "...", "table_id": "...", "hand_id": "...", "seat": 2, "seed_hex": "<hex>"}

``seed_hex`` is ``""`` when the seed was not accepted (the window had closed: the deal used the
empty seed for the seat).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path


class PlayerRecord:
    """Appends the facts of one account's hands to ``path`` (created with its directory)."""

    def __init__(self, path: Path, account_id: str) -> None:
        self.path = path
        self.account_id = account_id
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def _append(self, table_id: str, hand_id: str, seat: int, **fact: str) -> None:
        line: dict[str, str | int] = {
            "account_id": self.account_id,
            "table_id": table_id,
            "hand_id": hand_id,
        }
        line.update(seat=seat, **fact)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line, sort_keys=True) + "\n")

    def commitment_seen(self, table_id: str, hand_id: str, seat: int, commitment: bytes) -> None:
        """The commitment (SHA-256 of the server seed) the table showed before the deal."""
        self._append(table_id, hand_id, seat, commitment=commitment.hex())

    def seed_sent(self, table_id: str, hand_id: str, seat: int, seed: bytes) -> None:
        """The client seed accepted for the seat (``b""``: none was accepted in time)."""
        self._append(table_id, hand_id, seat, seed_hex=seed.hex())
