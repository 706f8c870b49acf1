"""The local cluster's roles per service (issue 32): ``bash deploy/local/postgres.sh roles`` runs
``python -m rummy_ops.pg_roles PASSFILE``.

For each schema of :data:`DATABASE_SCHEMAS` it makes (or keeps) an owner role and a runtime
role (:func:`rummy_platform.db_roles.provision`), their passwords generated on first use into
the pgpass file ``PASSFILE`` (mode 0600, kept afterwards), and prints, per service, the two
URLs to give it: ``DATABASE_URL`` (the runtime role) and ``RUMMY_DATABASE_OWNER_URL`` (the
owner, for its migrations). The URLs carry ``passfile=PASSFILE`` and never a password; with
``--ca-file`` they also carry ``sslmode=verify-full`` and that CA. The admin's URL is read from
the ``RUMMY_PG_ADMIN_URL`` variable (click's ``envvar``; keep it off the command line); it must
be a superuser or a CREATEROLE role (the local cluster's ``rummy``).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import psycopg

from rummy_platform.db_roles import ensure_passfile, provision, role_url, service_roles

#: The schemas (one per service keeping state in PostgreSQL) that get roles of their own.
DATABASE_SCHEMAS: tuple[str, ...] = ("ledger", "fairness")
#: The variable holding the admin's URL.
ADMIN_URL_VARIABLE = "RUMMY_PG_ADMIN_URL"


def provision_all(
    admin_url: str, passfile: Path, *, ca_file: Path | None = None, prefix: str = "rummy_"
) -> dict[str, dict[str, str]]:
    """Make every schema's roles; return service -> {``DATABASE_URL``,
    ``RUMMY_DATABASE_OWNER_URL``} (no password in them). Raises psycopg.Error and OSError."""
    urls: dict[str, dict[str, str]] = {}
    for schema in DATABASE_SCHEMAS:
        roles = service_roles(schema, prefix=prefix)
        passwords = ensure_passfile(passfile, [roles.owner, roles.runtime])
        provision(
            admin_url,
            roles,
            owner_password=passwords[roles.owner],
            runtime_password=passwords[roles.runtime],
        )
        urls[schema] = {
            "DATABASE_URL": role_url(admin_url, roles.runtime, passfile=passfile, ca_file=ca_file),
            "RUMMY_DATABASE_OWNER_URL": role_url(
                admin_url, roles.owner, passfile=passfile, ca_file=ca_file
            ),
        }
    return urls


@click.command()
@click.argument("passfile", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--ca-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="The CA the server's certificate is checked against (sslmode=verify-full).",
)
@click.option("--prefix", default="rummy_", show_default=True, help="Role names' prefix.")
@click.option(
    "--admin-url",
    envvar=ADMIN_URL_VARIABLE,
    required=True,
    help=f"The admin's PostgreSQL URL; give it in {ADMIN_URL_VARIABLE}, not on the command line.",
)
def main(passfile: Path, ca_file: Path | None, prefix: str, admin_url: str) -> None:
    """Make the owner and runtime roles of every service's schema; print their URLs as JSON."""
    if ca_file is not None:
        ca_file = ca_file.resolve()
    try:
        urls = provision_all(admin_url, passfile.resolve(), ca_file=ca_file, prefix=prefix)
    except psycopg.Error as error:
        raise click.ClickException(f"could not make the roles: {error}") from None
    except OSError as error:
        raise click.ClickException(f"cannot write {passfile}: {error.strerror}") from None
    click.echo(json.dumps(urls, indent=2))


if __name__ == "__main__":
    main()
