"""``rummy limits ACCOUNT``: an operator reads a player's own limits through the ledger's
``GetLimits`` (docs/rules/responsible-play.md: only the player sets them; operators read them).

Prints the limits in force (each period's loss limit, its net losses so far: ``losses 0.00 (won
12.35)`` when the player is up in the period, and when the period ends; the stake limit; the time
zone), a break or a self-exclusion, why play is closed now, and every pending change with when it
applies, amounts in House Tokens (``13.00``); ``--json`` prints the response as JSON (amounts in
integer hundredths).
"""

from __future__ import annotations

import click
from google.protobuf.json_format import MessageToJson
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ops.money import tokens
from rummy_ops.operator_auth import account_argument, operator_options, operator_token
from rummy_ops.reach import LEDGER_SERVICE, ledger_address_option, service_channel
from rummy_platform.auth import bearer_metadata


def _stamp(present: bool, stamp: Timestamp) -> str:
    return stamp.ToJsonString() if present else ""


def losses_text(net_loss_hundredths: int) -> str:
    """A period's net losses as a person reads them: ``losses 15.00``, or for a player who is up
    in the period (negative net losses) ``losses 0.00 (won 12.35)``."""
    if net_loss_hundredths < 0:
        return f"losses 0.00 (won {tokens(-net_loss_hundredths)})"
    return f"losses {tokens(net_loss_hundredths)}"


def describe(limits: pb.Limits) -> list[str]:
    """The lines ``rummy limits`` prints for ``limits`` (amounts in House Tokens, ``13.00``)."""
    lines = [f"account {limits.account_id}  time zone {limits.time_zone}"]
    for period in limits.periods:
        name = pb.LimitPeriod.Name(period.period).removeprefix("LIMIT_PERIOD_").lower()
        limit = tokens(period.limit_hundredths) if period.HasField("limit_hundredths") else "none"
        lines.append(
            f"  {name:5}  limit {limit}  {losses_text(period.net_loss_hundredths)}  "
            f"ends {period.period_ends_at.ToJsonString()}"
        )
    stake = (
        tokens(limits.stake_limit_hundredths)
        if limits.HasField("stake_limit_hundredths")
        else "none"
    )
    lines.append(f"  stake limit {stake}")
    if limits.HasField("break_until"):
        lines.append(f"  on a break until {_stamp(True, limits.break_until)}")
    if limits.excluded:
        until = _stamp(limits.HasField("excluded_until"), limits.excluded_until) or "indefinite"
        lines.append(f"  self-excluded until {until} (then closed until the player returns)")
    if limits.closed_reason:
        reason = pb.PlayClosedReason.Name(limits.closed_reason).removeprefix("PLAY_CLOSED_REASON_")
        until = _stamp(limits.HasField("closed_until"), limits.closed_until)
        lines.append(f"  play closed: {reason.lower()} {until}".rstrip())
    for change in limits.pending:
        value = change.time_zone or (
            tokens(change.amount_hundredths) if change.HasField("amount_hundredths") else "none"
        )
        lines.append(
            f"  pending {change.what} -> {value}  applies {change.effective_at.ToJsonString()}"
        )
    return lines


@click.command("limits")
@account_argument
@ledger_address_option
@operator_options
@click.option("--json", "as_json", is_flag=True, help="Print the response as JSON.")
def limits(account_id: str, address: str, token: str | None, operator: str, as_json: bool) -> None:
    """Show ACCOUNT_ID's own limits, pending changes and period losses (read only). Exit status
    1 when the ledger refuses (the status and its message are printed)."""
    metadata = bearer_metadata(operator_token(token, operator))
    with service_channel(LEDGER_SERVICE, address) as channel:
        answer = pb_grpc.LedgerServiceStub(channel).GetLimits(
            pb.GetLimitsRequest(account_id=account_id), metadata=metadata, timeout=10
        )
    if as_json:
        click.echo(MessageToJson(answer.limits))
        return
    for line in describe(answer.limits):
        click.echo(line)
