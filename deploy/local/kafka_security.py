"""The secured local broker's Python side (``RUMMY_KAFKA_SECURE=1 deploy/local/kafka.sh start``).

    python deploy/local/kafka_security.py prepare --certs DIR --credentials DIR --keystore PEM
    python deploy/local/kafka_security.py ready HOST:PORT --credentials DIR --ca PEM --timeout 60
    python deploy/local/kafka_security.py acls HOST:PORT --credentials DIR --ca PEM --prefix P

``prepare``: the local CA and the broker's certificate (``rummy certs``' files, the ``kafka``
one), the broker's PEM keystore (its key, then its certificate; mode 0600), and a password file
per SCRAM user (``<user>.password``, mode 0600, made once, random) of
:data:`rummy_platform.eventlog.kafka_acls.SCRAM_USERS`. ``ready``: a metadata round trip as the
broker's own super user. ``acls``: the grants of :mod:`rummy_platform.eventlog.kafka_acls` for
the topic prefix ``P``, made as that super user. No password is ever printed.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

# readiness.py beside this script (on sys.path when run); mypy names it deploy.local.readiness
# (a `deploy/local` on mypy_path would make its `kafka/` folder shadow the kafka package).
from readiness import kafka_round_trip, wait_until_ready  # type: ignore[import-not-found]

from rummy_ops.certs import ensure_certs
from rummy_platform.eventlog import KafkaCredentials, KafkaSecurity, ensure_password_file
from rummy_platform.eventlog.kafka_acls import BROKER_USER, SCRAM_USERS, apply_acls


def prepare(certs: Path, credentials: Path, keystore: Path) -> None:
    files, _ = ensure_certs(certs)
    cert, key = files.pairs[BROKER_USER]
    keystore.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(keystore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key.read_bytes() + cert.read_bytes())
    for user in SCRAM_USERS:
        ensure_password_file(KafkaCredentials(credentials, files.ca).password_file(user))


def broker_security(credentials: Path, ca: Path) -> KafkaSecurity:
    """The broker's own super user over SASL_SSL."""
    return KafkaCredentials(credentials, ca).security(BROKER_USER)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("prepare")
    made.add_argument("--certs", type=Path, required=True)
    made.add_argument("--credentials", type=Path, required=True)
    made.add_argument("--keystore", type=Path, required=True)
    for name in ("ready", "acls"):
        command = commands.add_parser(name)
        command.add_argument("address")
        command.add_argument("--credentials", type=Path, required=True)
        command.add_argument("--ca", type=Path, required=True)
        command.add_argument("--timeout", type=float, default=0.0)
        command.add_argument("--prefix", default="")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.certs, args.credentials, args.keystore)
        return 0
    security = broker_security(args.credentials, args.ca)
    if args.command == "ready":
        probe = functools.partial(kafka_round_trip, security=security.client_config())
        try:
            summary = wait_until_ready("kafka", args.address, args.timeout, probe)
        except TimeoutError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"kafka ready at {args.address} (SASL_SSL as User:{BROKER_USER}): {summary}")
        return 0
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(
        bootstrap_servers=args.address.split(","),
        client_id="rummy-acls",
        **security.client_config(),
    )
    try:
        count = apply_acls(admin, args.prefix)
    finally:
        admin.close()
    print(f"kafka: {count} ACLs for the topic prefix {args.prefix!r} ({len(SCRAM_USERS)} users)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
