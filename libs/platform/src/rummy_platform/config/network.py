"""Where a process listens and what it reaches: its ports (defaults: :mod:`rummy_platform.ports`'
table), the address it binds, the Kafka brokers' list."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from rummy_platform.config.base import setting
from rummy_platform.ports import DEFAULT_PORTS


def port_setting(variable: str, which: int, meaning: str) -> Any:
    shown = ", ".join(f"{ports[which]} {service}" for service, ports in DEFAULT_PORTS.items())
    return setting(
        variable, meaning=f"{meaning} (0: any free port)", shown_default=shown, ge=0, le=65535
    )


def bindable_host(value: str) -> str:
    """``value`` if it is an IP address or a name this machine resolves (``localhost``, a pod's
    host name); else ValueError, so a typo fails at start, naming the variable, instead of as
    gRPC's bind error."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        try:
            socket.getaddrinfo(value, None)
        except (OSError, UnicodeError):
            raise ValueError(
                f"an IP address or a host name this machine resolves, got {value!r}"
            ) from None
    return value


def broker_list(value: str) -> str:
    """``value`` if it is ``host:port[,host:port...]`` with ports 1..65535 (whitespace around
    entries allowed); else ValueError (kafka-python would only time out, 30 s later)."""
    for entry in value.split(","):
        host, sep, port = entry.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(f"host:port[,host:port...] with ports 1..65535, got {value!r}")
    return value
