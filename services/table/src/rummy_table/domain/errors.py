"""The errors the table's domain raises when it refuses a decision (nothing is decided, nothing
changes). The application maps each to the caller's status (``rummy_table.application.commit``:
:data:`~rummy_table.application.commit.STATUS_OF_REFUSAL`), the message unchanged as the
status details."""

from __future__ import annotations


class TableRefused(Exception):
    """Base of the table's refusals; the message is what the caller is told."""


class BadRequest(TableRefused):
    """The request names what cannot exist whatever the state (a seat out of range):
    INVALID_ARGUMENT."""


class WrongState(TableRefused):
    """The request is well formed but the table's state forbids it (a hand runs, the seat is
    taken, the table is closing, the answer is not awaited): FAILED_PRECONDITION."""


class NotPermitted(TableRefused):
    """The caller may not do this here (not seated, not a seat of the match): PERMISSION_DENIED."""
