"""The operator's token of the ops commands that call a service (``rummy close-table``,
``rummy limits``, ``rummy watch``): ``--token`` (``RUMMY_TOKEN``) or one minted for
``--operator`` with the issuer's private key ``rummy token`` uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from rummy_ops.token import issuer_signing_key
from rummy_platform.auth import Role, TokenAuthority
from rummy_platform.config import ConfigError

#: Seconds a token minted by these commands lives.
MINTED_TOKEN_SECONDS = 900

F = TypeVar("F", bound=Callable[..., object])


def operator_token(token: str | None, operator: str) -> str:
    """``token``, or a fresh operator token for ``operator``. Raises click.ClickException when
    issuer's private key can be read."""
    if token:
        return token
    try:
        key, _source = issuer_signing_key()
    except ConfigError as error:
        raise click.ClickException(f"{error}; or pass an operator's token with --token") from None
    return TokenAuthority(signing_key=key).issue(operator, Role.OPERATOR, MINTED_TOKEN_SECONDS)


def operator_options(command: F) -> F:
    """The ``--token`` and ``--operator`` options of a command."""
    command = click.option(
        "--operator",
        default="ops",
        show_default=True,
        help="The operator account of a minted token.",
    )(command)
    return click.option(
        "--token",
        envvar="RUMMY_TOKEN",
        help="An operator's bearer token (RUMMY_TOKEN); default: one minted for --operator with "
        "the issuer's private key `rummy token` uses.",
    )(command)


def _account_id(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("an account id is required (it is empty)", param=param)
    return value


def account_argument(command: F) -> F:
    """The ``ACCOUNT_ID`` argument of a command that reads one player's account (``rummy
    hands``, ``rummy limits``): refused locally (usage error, exit status 2) when empty or
    blank, before any token is minted or service called."""
    return click.argument("account_id", callback=_account_id)(command)
