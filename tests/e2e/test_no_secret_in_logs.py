"""Secrets reach the services from files and the environment, never from the command line, and
no service writes one to its log (issue 32: "secrets from files, never from the command line or
logs"). After the short demo (bots playing every game, tokens minted and sent with every call),
the log of every service of the stack and every service's command line are searched
(rummy_testing.leaks) for a bearer token, a private key the stack holds (the token issuer's, the
services' token key, the TLS keys when the stack runs TLS) and the database password. The
issuer's private key is for ``rummy token`` alone: no service's environment names it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rummy_ops.demo.report import DemoReport
from rummy_platform.ports import SERVICES
from rummy_testing.leaks import leaks, private_key_lines

#: tests/e2e/conftest.py's RunningStack (conftest modules are not importable by name)
RunningStack = Any
#: How a service's process is started (``python -m rummy_table`` ...).
SERVICE_MODULE = re.compile(rf"-m rummy_({'|'.join(SERVICES)})\b")


def session_service_processes() -> Iterator[tuple[int, str, str]]:
    """(pid, command line, environment) of every live child of this process that runs a
    service (``python -m rummy_<service>``); a process that ends while read is passed over."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            if int(parent) != me or state == "Z":
                continue
            command_line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environment = (entry / "environ").read_bytes().decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if SERVICE_MODULE.search(command_line):
            yield int(entry.name), command_line, environment


def test_no_service_log_or_command_line_holds_a_token_key_or_password(
    rummy_stack: RunningStack, short_demo: DemoReport
) -> None:
    assert short_demo.ended, "the demo played hands: its calls carried tokens"
    config = rummy_stack.stack.config
    held = [config.keys.issuer_key, config.keys.service_key]
    if config.tls_dir is not None:
        held += [path for path in config.tls_dir.rglob("*") if path.is_file()]
    key_lines = private_key_lines(held)
    assert key_lines, "the stack holds private keys: the search must know them"
    passwords = [urlsplit(rummy_stack.database_url).password or ""]
    logs = sorted(config.log_dir.glob("*.log"))
    assert {path.stem for path in logs} >= set(config.services)
    found = {
        f"{path.name}: {leak}"
        for path in logs
        for leak in leaks(path.read_text(errors="replace"), key_lines, passwords)
    }
    # Every service process of this session still running (the stack's, and those tests
    # started beside it or in place of one they killed): its command line and environment.
    services = list(session_service_processes())
    assert services, "the stack's services run: their command lines must be searched"
    for pid, command_line, environment in services:
        found |= {
            f"pid {pid}'s command line: {leak}"
            for leak in leaks(command_line, key_lines, passwords)
        }
        if "RUMMY_TOKEN_SIGNING_KEY_FILE=" in environment:
            found.add(f"pid {pid} ({command_line[:60]}) names the issuer's private key")
    assert sorted(found) == []
