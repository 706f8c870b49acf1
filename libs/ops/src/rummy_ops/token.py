"""``rummy token``: mint a bearer token for a player, operator or service account."""

from __future__ import annotations

import click

from rummy_platform.auth import DEFAULT_TTL_SECONDS, Role, TokenAuthority
from rummy_platform.config import ConfigError, jwt_secret_from_env


@click.command()
@click.option(
    "--role",
    required=True,
    type=click.Choice([role.value for role in Role]),
    help="What the token may do: player (own account only), operator, or service (internal).",
)
@click.option("--account", required=True, help="The account id the token names (its `sub`).")
@click.option(
    "--ttl",
    default=DEFAULT_TTL_SECONDS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seconds until the token expires.",
)
def token(role: str, account: str, ttl: int) -> None:
    """Print a signed token (HS256, secret from RUMMY_JWT_SECRET) to stdout.

    Use it as gRPC metadata `authorization: Bearer <token>`, e.g.
    grpcurl -H "authorization: Bearer $(rummy token --role operator --account ops)" ...
    """
    if not account.strip():
        raise click.BadParameter("must not be empty", param_hint="--account")
    try:
        authority = TokenAuthority(jwt_secret_from_env())
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(authority.issue(account, Role(role), ttl))
