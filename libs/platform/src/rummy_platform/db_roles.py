"""PostgreSQL roles per service (issue 32): an owner that owns the service's schema and runs its
migrations, and a runtime role that may only read and write the schema's tables.

For a service whose tables live in schema ``s`` (``ledger``, ``fairness``):

- ``<prefix><s>_owner`` (LOGIN) owns the schema and every object in it; the migrations run as
  it (``RUMMY_DATABASE_OWNER_URL``), so only it may CREATE, ALTER or DROP there.
- ``<prefix><s>`` (LOGIN), the role of the service's ``DATABASE_URL``: USAGE on ``s`` only,
  SELECT/INSERT/UPDATE/DELETE on its tables, USAGE/SELECT on its sequences, SELECT alone on
  yoyo's bookkeeping tables; nothing on any other schema (no USAGE there, so
  ``SELECT * FROM fairness.server_seeds`` as the ledger's role is "permission denied for
  schema fairness").
- Both have ``search_path`` set to ``s``.

:func:`provision` (run by the cluster's admin: a superuser, or on PostgreSQL 15 a CREATEROLE
role) creates the roles and the schema, sets their passwords from SCRAM verifiers computed
client-side (the password itself never reaches the server, its log or a command line), and
moves an existing schema and its objects to the owner, keeping the data (a database that ran in
the one-role mode keeps working). :func:`grant_runtime` gives the runtime role its privileges;
:func:`rummy_platform.db.apply_migrations` calls it after every run with ``runtime_role``.

Passwords live in a pgpass file (:func:`ensure_passfile`, mode 0600) that libpq reads through
the URL's ``passfile`` parameter (:func:`role_url`), so no URL holds a password.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import psycopg
from psycopg import sql

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

#: yoyo's bookkeeping tables in a migrated schema: the runtime role may only read them.
YOYO_TABLES = ("_yoyo_log", "_yoyo_migration", "_yoyo_version", "yoyo_lock")


def check_schema_name(schema: str) -> str:
    """Return ``schema`` if it is a plain lowercase SQL identifier; raise ValueError otherwise."""
    if not _SCHEMA_NAME.match(schema):
        raise ValueError(f"schema name {schema!r} must match {_SCHEMA_NAME.pattern}")
    return schema


@dataclass(frozen=True)
class ServiceRoles:
    """The schema of a service and its two roles' names (plain SQL identifiers)."""

    schema: str
    owner: str
    runtime: str


def service_roles(schema: str, *, prefix: str = "rummy_") -> ServiceRoles:
    """``schema``'s roles: ``<prefix><schema>_owner`` and ``<prefix><schema>``. Raises
    ValueError when a name would not be a plain lowercase identifier."""
    return ServiceRoles(
        schema=check_schema_name(schema),
        owner=check_schema_name(f"{prefix}{schema}_owner"),
        runtime=check_schema_name(f"{prefix}{schema}"),
    )


def _set_login(conn: psycopg.Connection, role: str, password: str) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if exists is None:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE").format(
                sql.Identifier(role)
            )
        )
    verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256")
    conn.execute(
        sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(
            sql.Identifier(role), sql.Literal(verifier.decode())
        )
    )


def provision(
    admin_url: str, roles: ServiceRoles, *, owner_password: str, runtime_password: str
) -> None:
    """Create (or update) ``roles`` and their schema in the database of ``admin_url``, as its
    role (a superuser, or a CREATEROLE role on PostgreSQL 15+). Idempotent; an existing schema
    and every table, view, sequence and function in it pass to the owner with their data; the
    runtime role gets its grants (:func:`grant_runtime`). Raises psycopg.Error (e.g.
    InsufficientPrivilege when the admin may not create roles)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        _set_login(conn, roles.owner, owner_password)
        _set_login(conn, roles.runtime, runtime_password)
        owner, runtime = sql.Identifier(roles.owner), sql.Identifier(roles.runtime)
        schema = sql.Identifier(roles.schema)
        database = sql.Identifier(conn.info.dbname)
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(database, owner, runtime)
        )
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = superuser.fetchone()
        if not (row and row[0]):
            # A CREATEROLE admin hands objects to the owner only as one of its members.
            conn.execute(sql.SQL("GRANT {} TO current_user").format(owner))
        with conn.transaction():
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(schema, owner)
            )
            conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(schema, owner))
            _hand_objects_to_owner(conn, roles)
            conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(schema))
            for role in (owner, runtime):
                conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(role, schema))
        grant_runtime(conn, roles)


def _hand_objects_to_owner(conn: psycopg.Connection, roles: ServiceRoles) -> None:
    owner = sql.Identifier(roles.owner)
    # Tables first: a sequence a column owns follows its table (and may not be moved alone).
    relations = conn.execute(
        """
        SELECT c.relname, c.relkind FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
          AND pg_get_userbyid(c.relowner) <> %s
        ORDER BY c.relkind = 'S', c.relname
        """,
        (roles.schema, roles.owner),
    ).fetchall()
    for name, kind in relations:
        still = conn.execute(
            "SELECT pg_get_userbyid(relowner) <> %s FROM pg_class WHERE oid = %s::regclass",
            (roles.owner, f"{roles.schema}.{name}"),
        ).fetchone()
        if not (still and still[0]):
            continue
        keyword = {"v": "VIEW", "m": "MATERIALIZED VIEW", "S": "SEQUENCE"}.get(kind, "TABLE")
        conn.execute(
            sql.SQL("ALTER {} {} OWNER TO {}").format(
                sql.SQL(keyword), sql.Identifier(roles.schema, name), owner
            )
        )
    functions = conn.execute(
        """
        SELECT p.oid::regprocedure::text, p.prokind FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = %s AND pg_get_userbyid(p.proowner) <> %s
        """,
        (roles.schema, roles.owner),
    ).fetchall()
    for signature, kind in functions:
        keyword = "PROCEDURE" if kind == "p" else "FUNCTION"
        conn.execute(
            sql.SQL("ALTER {} {} OWNER TO {}").format(sql.SQL(keyword), sql.SQL(signature), owner)
        )


def grant_runtime(conn: psycopg.Connection, roles: ServiceRoles) -> None:
    """Give ``roles.runtime`` USAGE on the schema, SELECT/INSERT/UPDATE/DELETE on its tables,
    USAGE/SELECT on its sequences and SELECT alone on yoyo's tables, as a role that may grant
    them (the owner, a member of it, or a superuser). Idempotent; raises psycopg.Error."""
    schema, runtime = sql.Identifier(roles.schema), sql.Identifier(roles.runtime)
    statements = [
        sql.SQL("GRANT USAGE ON SCHEMA {} TO {}"),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}"),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}"),
    ]
    for statement in statements:
        conn.execute(statement.format(schema, runtime))
    present = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s)",
        (roles.schema, list(YOYO_TABLES)),
    ).fetchall()
    for (table,) in present:
        conn.execute(
            sql.SQL("REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON {} FROM {}").format(
                sql.Identifier(roles.schema, table), runtime
            )
        )
    if not conn.autocommit:
        conn.commit()


def read_passfile(path: Path) -> dict[str, str]:
    """Role -> password of the ``*:*:*:<role>:<password>`` lines of the pgpass file ``path``
    (missing file: empty)."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    passwords: dict[str, str] = {}
    for line in lines:
        fields = line.split(":")
        if len(fields) == 5 and fields[:3] == ["*", "*", "*"]:
            passwords[fields[3]] = fields[4]
    return passwords


def ensure_passfile(path: Path, roles: list[str]) -> dict[str, str]:
    """Role -> password for every role of ``roles``: those in the pgpass file ``path`` are kept,
    the others are generated (32 random bytes, URL-safe base64: no ``:`` or ``\\`` to escape)
    and added; the file is written atomically with mode 0600 (libpq ignores a pgpass file
    others may read). Raises OSError when it cannot be written."""
    passwords = read_passfile(path)
    missing = [role for role in roles if role not in passwords]
    if not missing and path.exists():
        return {role: passwords[role] for role in roles}
    for role in missing:
        passwords[role] = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.writelines(f"*:*:*:{role}:{password}\n" for role, password in passwords.items())
    temporary.replace(path)
    return {role: passwords[role] for role in roles}


def role_url(database_url: str, role: str, *, passfile: Path, ca_file: Path | None = None) -> str:
    """``database_url`` (host, port, database) as ``role``, its password read by libpq from
    ``passfile``; with ``ca_file``, ``sslmode=verify-full`` against that CA's certificate.
    Any password and ``passfile``/``sslmode``/``sslrootcert`` of ``database_url`` are
    replaced. Raises ValueError for a string that is not a database URL."""
    parts = urlsplit(database_url)
    if not parts.scheme or not parts.hostname:
        raise ValueError("not a database URL (expected postgresql://user:pass@host:port/db)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{quote(role)}@{host}" + (f":{parts.port}" if parts.port else "")
    replaced = {"passfile", "sslmode", "sslrootcert", "password"}
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in replaced]
    query.append(("passfile", str(passfile)))
    if ca_file is not None:
        query += [("sslmode", "verify-full"), ("sslrootcert", str(ca_file))]
    return parts._replace(netloc=netloc, query=urlencode(query)).geturl()


def url_role(database_url: str) -> str:
    """The role a ``postgresql://`` URL (or conninfo string) logs in as. Raises ValueError when
    it names none."""
    user = psycopg.conninfo.conninfo_to_dict(database_url).get("user")
    if not user:
        raise ValueError("the database URL names no role (postgresql://ROLE@host/db)")
    return str(user)
