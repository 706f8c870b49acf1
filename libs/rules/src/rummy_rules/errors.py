"""The one error a rules decision raises: ``RuleViolation``, with a code a host can map.

A rejected command is not an outcome of the game (a wrong declare is an outcome and has an event);
it is a request the rules refuse, and it changes nothing. Each code says which gRPC status a host
should answer with (``ErrorCode.status``), so the mapping lives in one table, here
(``docs/rules/hand-flow.md#rejections``).
"""

from __future__ import annotations

from enum import Enum


class ErrorCode(Enum):
    """Why a command was refused. ``status`` is the gRPC status name a host should return."""

    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    STALE_TURN = "STALE_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    ALREADY_DRAWN = "ALREADY_DRAWN"
    NOT_DRAWN = "NOT_DRAWN"
    EMPTY_PILE = "EMPTY_PILE"
    INVALID_CARD = "INVALID_CARD"
    INVALID_DEAL = "INVALID_DEAL"
    INVALID_COMMAND = "INVALID_COMMAND"
    NOT_IN_HAND = "NOT_IN_HAND"
    DUPLICATE = "DUPLICATE"

    @property
    def status(self) -> str:
        """``FAILED_PRECONDITION``, ``INVALID_ARGUMENT`` or ``PERMISSION_DENIED``."""
        return _STATUS[self]


_STATUS = {
    ErrorCode.NOT_YOUR_TURN: "FAILED_PRECONDITION",
    ErrorCode.STALE_TURN: "FAILED_PRECONDITION",
    ErrorCode.WRONG_PHASE: "FAILED_PRECONDITION",
    ErrorCode.ALREADY_DRAWN: "FAILED_PRECONDITION",
    ErrorCode.NOT_DRAWN: "FAILED_PRECONDITION",
    ErrorCode.EMPTY_PILE: "FAILED_PRECONDITION",
    ErrorCode.DUPLICATE: "FAILED_PRECONDITION",
    ErrorCode.INVALID_CARD: "INVALID_ARGUMENT",
    ErrorCode.INVALID_DEAL: "INVALID_ARGUMENT",
    ErrorCode.INVALID_COMMAND: "INVALID_ARGUMENT",
    ErrorCode.NOT_IN_HAND: "PERMISSION_DENIED",
}


class RuleViolation(Exception):
    """A command the rules refuse. ``code`` is an ErrorCode, ``message`` says why in plain words."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
