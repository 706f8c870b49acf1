"""PostgreSQL for a service: its own schema, its yoyo migrations, a psycopg 3 connection pool.

Each service keeps its tables in a schema named after it (``fairness``, ``ledger``...) inside the
one database of ``DATABASE_URL``; connections from :func:`open_pool` have ``search_path`` set to
that schema, so SQL names tables unqualified. The event plumbing every such service needs
(``consumer_offsets``, ``processed_events``, ``outbox``, ``stream_versions``) is defined once, in
this package's ``migrations/`` (:data:`PLATFORM_MIGRATIONS_DIR`), and applied into each service's
schema before the service's own migrations. A bootstrap does::

    migrate_service(settings.database_url, MIGRATIONS_DIR, schema="fairness",
                    owner_url=settings.database_owner_url)
    pool = open_pool(settings.database_url, schema="fairness", name="fairness")

With ``RUMMY_DATABASE_OWNER_URL`` set the migrations run as the schema's owner role and the pool
as ``DATABASE_URL``'s runtime role, which may only read and write the schema's tables
(:mod:`rummy_platform.db_roles`); unset, one role does both. Nothing here runs at import time.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool
from yoyo import get_backend, read_migrations

from rummy_platform.db_roles import ServiceRoles, check_schema_name, grant_runtime, url_role

#: The platform's own yoyo migrations (ids prefixed ``platform_``, so they never clash with a
#: service's): the tables :mod:`rummy_platform.outbox` and :mod:`rummy_platform.reactor` use.
PLATFORM_MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def yoyo_url(database_url: str, schema: str | None = None) -> str:
    """``postgresql://...`` -> ``postgresql+psycopg://...`` (yoyo's scheme for psycopg 3), with
    ``?schema=<schema>`` added when given (yoyo then sets ``search_path`` to it).

    Raises ValueError for a string that is not a database URL.
    """
    parts = urlsplit(database_url)
    if not parts.scheme or not parts.netloc:
        raise ValueError("not a database URL (expected postgresql://user:pass@host:port/db)")
    scheme = "postgresql+psycopg" if parts.scheme in ("postgres", "postgresql") else parts.scheme
    query = parse_qsl(parts.query)
    if schema is not None:
        query = [(k, v) for k, v in query if k != "schema"]
        query.append(("schema", check_schema_name(schema)))
    return parts._replace(scheme=scheme, query=urlencode(query)).geturl()


def ensure_schema(database_url: str, schema: str) -> None:
    """Create ``schema`` if it does not exist (idempotent; an existing schema needs no privilege
    on the database, so its owner role may run this). Raises psycopg.Error if the role may not
    create it."""
    name = check_schema_name(schema)
    with psycopg.connect(database_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone():
            return
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(name)))


def apply_migrations(
    database_url: str,
    migrations_dir: Path,
    *,
    schema: str | None = None,
    runtime_role: str | None = None,
) -> None:
    """Apply every pending yoyo migration of the platform (:data:`PLATFORM_MIGRATIONS_DIR`), then
    of ``migrations_dir`` (plain SQL files, each in its own transaction, under a lock so concurrent
    starters apply them once). A service's migrations may rely on the platform's tables.

    With ``schema`` the schema is created first and the migrations (and yoyo's bookkeeping
    tables) live in it. With ``runtime_role`` too (``database_url`` then being the schema
    owner's, see :mod:`rummy_platform.db_roles`), that role is granted what the service needs
    on the schema's tables afterwards. Raises yoyo's MigrationConflict if a service migration's
    id is also a platform migration's, and yoyo / psycopg errors unchanged.
    """
    if schema is not None:
        ensure_schema(database_url, schema)
    backend = get_backend(yoyo_url(database_url, schema))
    # One list, platform first: yoyo keeps this order (bar "-- depends:") and rejects duplicate ids.
    migrations = read_migrations(str(PLATFORM_MIGRATIONS_DIR), str(migrations_dir))
    with backend.lock():
        backend.apply_migrations(backend.to_apply(migrations))
    if schema is not None and runtime_role is not None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            owner = str(conn.info.user)
            grant_runtime(conn, ServiceRoles(schema=schema, owner=owner, runtime=runtime_role))


def migrate_service(
    database_url: str,
    migrations_dir: Path,
    *,
    schema: str,
    owner_url: str | None = None,
) -> None:
    """A service's start: apply its migrations into ``schema`` as the schema's owner
    (``owner_url``, ``RUMMY_DATABASE_OWNER_URL``) and grant ``database_url``'s role what it
    needs; without ``owner_url``, as ``database_url``'s own role (the one-role mode). Raises
    ValueError when ``owner_url`` is given but ``database_url`` names no role, and the errors of
    :func:`apply_migrations`."""
    if owner_url is None:
        apply_migrations(database_url, migrations_dir, schema=schema)
        return
    apply_migrations(owner_url, migrations_dir, schema=schema, runtime_role=url_role(database_url))


def open_pool(
    database_url: str,
    *,
    schema: str | None = None,
    name: str = "rummy",
    min_size: int = 1,
    max_size: int = 8,
    timeout_s: float = 30.0,
) -> ConnectionPool:
    """An open psycopg pool whose connections use ``schema`` as their ``search_path``.

    Waits up to ``timeout_s`` seconds for the first connection; raises
    ``psycopg_pool.PoolTimeout`` if none can be made.
    """
    kwargs: dict[str, object] = {}
    if schema is not None:
        kwargs["options"] = f"-c search_path={check_schema_name(schema)}"
    pool = ConnectionPool(
        database_url, min_size=min_size, max_size=max_size, open=False, name=name, kwargs=kwargs
    )
    pool.open(wait=True, timeout=timeout_s)
    return pool
