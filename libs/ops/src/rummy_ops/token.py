"""``rummy token``: mint a bearer token for a player, operator or service account, signed with
the issuer's private key (the only holder of it in the local stack); ``--new-key`` rotates it."""

from __future__ import annotations

import os
from pathlib import Path

import click
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from rummy_ops.stack import StackError, local_token_keys, repository_root
from rummy_platform.auth import DEFAULT_TTL_SECONDS, Role, TokenAuthority
from rummy_platform.config import SIGNING_KEY_VARIABLE, ConfigError, token_max_lifetimes_from_env
from rummy_platform.token_keys import key_files, read_signing_key, rotate_key

#: Where the local stack keeps its token keys, under the checkout.
LOCAL_KEYS = Path(".local") / "token-keys"


def issuer_signing_key(root: Path | None = None) -> tuple[Ed25519PrivateKey, str]:
    """The issuer's private key and the file it came from: the file ``RUMMY_TOKEN_SIGNING_KEY_FILE``
    names if set, else the checkout's ``.local/token-keys/issuer.key.pem`` that ``rummy demo`` /
    ``rummy up`` / ``rummy token --new-key`` made (never made here). Raises ConfigError if
    neither can be read."""
    named = os.environ.get(SIGNING_KEY_VARIABLE)
    if named:
        return read_signing_key(Path(named), SIGNING_KEY_VARIABLE), named
    try:
        path = key_files((root or repository_root()) / LOCAL_KEYS).issuer_key
    except StackError:  # not run from a checkout: no .local either
        path = None
    if path is None or not path.is_file():
        raise ConfigError(
            f"{SIGNING_KEY_VARIABLE} is not set and there is no .local/token-keys/issuer.key.pem: "
            "name the issuer's private key file, or run `rummy token --new-key` (or `rummy demo` "
            "/ `rummy up`) once to make one"
        )
    return read_signing_key(path, SIGNING_KEY_VARIABLE), str(path)


@click.command()
@click.option(
    "--role",
    type=click.Choice([role.value for role in Role]),
    help="What the token may do: player (own account only), operator, or service (internal).",
)
@click.option("--account", help="The account id the token names (its `sub`).")
@click.option(
    "--ttl",
    default=None,
    type=click.IntRange(min=1),
    help=f"Seconds until the token expires, at most the role's maximum lifetime "
    f"(RUMMY_<ROLE>_TOKEN_MAX_SECONDS: player 12 h, operator 24 h, service 1 h by default). "
    f"[default: {DEFAULT_TTL_SECONDS}, or the role's maximum when shorter]",
)
@click.option(
    "--new-key",
    is_flag=True,
    help="Rotate the local stack's issuer key: make a new Ed25519 key pair in .local/token-keys/ "
    "(the new public key first in issuer.pub.pem, the previous one kept so its tokens still "
    "verify); restart the services to load it.",
)
def token(role: str | None, account: str | None, ttl: int | None, new_key: bool) -> None:
    """Print a signed token (EdDSA) to stdout. The issuer's private key is the file
    RUMMY_TOKEN_SIGNING_KEY_FILE names if set, else .local/token-keys/issuer.key.pem of this
    checkout (made by `rummy demo` / `rummy up` / `--new-key`); which file was used, and its key
    id (the token's `kid`), is said on stderr. A token longer-lived than the services accept for
    its role is refused here.

    Use it as gRPC metadata `authorization: Bearer <token>`, e.g.
    grpcurl -H "authorization: Bearer $(rummy token --role operator --account ops)" ...
    """
    if new_key:
        try:
            files = local_token_keys(repository_root())  # both pairs exist before rotating
        except StackError as error:
            raise click.ClickException(str(error)) from None
        kid = rotate_key(files.issuer_key, files.issuer_public_keys)
        click.echo(
            f"new issuer key {kid} in {files.issuer_key} (public keys: {files.issuer_public_keys})",
            err=True,
        )
        if role is None and account is None:
            return
    if role is None or account is None:
        raise click.UsageError("--role and --account are required to mint a token")
    if not account.strip():
        raise click.BadParameter("must not be empty", param_hint="--account")
    try:
        lifetimes = token_max_lifetimes_from_env()
        key, source = issuer_signing_key()
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    authority = TokenAuthority(signing_key=key, max_lifetime_seconds=lifetimes)
    try:
        minted = authority.issue(account, Role(role), ttl)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--ttl") from None
    click.echo(f"key from {source} (kid {authority.key_id})", err=True)
    click.echo(minted)
