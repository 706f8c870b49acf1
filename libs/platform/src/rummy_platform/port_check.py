"""A port in use is a sentence, not a traceback: whether a port is free to listen on, who holds
it when it is not (from ``/proc``), and the one line that says so.

``rummy demo``/``rummy up`` check every port they would listen on before they start anything
(:func:`ensure_free`); a service checks its two when it starts and turns a failed bind into the
same :class:`PortInUse`; both print ``Error: <the sentence>`` and exit with status 2::

    Error: port 15051, wanted by the table service's gRPC server, is in use by pid 4242
    (python3 -m http.server 15051): stop that process or set RUMMY_TABLE_GRPC_PORT to a free port
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

from rummy_platform.ports import ListeningPort

#: Exit status of a start refused for a port in use (as for a bad setting: click's usage status).
PORT_IN_USE_STATUS = 2
_PROC = Path("/proc")
_LISTEN, _TIME_WAIT = "0A", "06"  # the TCP state column of /proc/net/tcp
#: The holder of a port that no process holds, only a closed connection's TIME-WAIT.
TIME_WAIT_HOLDER = "a closed connection in TIME-WAIT"
_COMMAND_CHARS = 120


class PortInUse(Exception):
    """``wanted.port`` is taken; ``holder`` (``pid 42 (cmd ...)``) when ``/proc`` tells. Its
    text is the sentence (without the ``Error:`` that the printers put before it)."""

    def __init__(self, wanted: ListeningPort, holder: str | None) -> None:
        self.wanted = wanted
        self.holder = holder
        if holder == TIME_WAIT_HOLDER:
            by, fix = f" by {holder}", "wait a minute for the kernel to free it"
        elif holder:
            by, fix = f" by {holder}", "stop that process"
        else:
            by, fix = "", "stop what holds it"
        move = f"set {wanted.variable} to a free port" if wanted.variable else "move it"
        super().__init__(
            f"port {wanted.port}, wanted by {wanted.listener}, is in use{by}: {fix} or {move}"
        )


def in_use(host: str, port: int) -> bool:
    """True when ``host:port`` cannot be bound for listening because something holds it (a
    listener, or a connection using it as its source port, or such a connection closed moments
    ago whose TIME-WAIT was not opened with ``SO_REUSEADDR``); binds as the servers do, with
    ``SO_REUSEADDR``, so what this says is what their bind will meet. Port 0 (any free one) is
    never in use; other bind errors are not this one's to report."""
    if port == 0:
        return False
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), port))
        except OSError as error:
            return error.errno == errno.EADDRINUSE
    return False


def holder(port: int) -> str | None:
    """``pid <pid> (<command line>)`` of a process with a TCP socket on local port ``port`` (a
    listener first), from ``/proc/net/tcp[6]`` and the socket inodes of ``/proc/*/fd``;
    :data:`TIME_WAIT_HOLDER` when only closed connections hold it; None when ``/proc`` does not
    tell (another user's process, no ``/proc``)."""
    inodes, time_wait = _sockets_on(port)
    pids = _pids_holding(set(inodes)) if inodes else {}
    for inode in inodes:
        if inode in pids:
            pid = pids[inode]
            return f"pid {pid} ({_command(pid)})"
    return TIME_WAIT_HOLDER if time_wait and not inodes else None


def ensure_free(wanted: Iterable[ListeningPort], host: str = "127.0.0.1") -> None:
    """Raise :class:`PortInUse` for the first of ``wanted`` that is in use on ``host``."""
    for port in wanted:
        if in_use(host, port.port):
            raise taken(port)


def taken(wanted: ListeningPort) -> PortInUse:
    """The :class:`PortInUse` of ``wanted`` (a port known to be taken), naming its holder."""
    return PortInUse(wanted, holder(wanted.port))


def exit_port_in_use(error: PortInUse) -> NoReturn:
    """Print ``Error: <sentence>`` to stderr and exit with :data:`PORT_IN_USE_STATUS`."""
    print(f"Error: {error}", file=sys.stderr, flush=True)
    raise SystemExit(PORT_IN_USE_STATUS)


def _sockets_on(port: int) -> tuple[list[int], bool]:
    """Inodes of the TCP sockets on local port ``port``, listeners first (sockets that no
    process holds have inode 0 and are left out), and whether one of those is in TIME-WAIT."""
    listening: list[int] = []
    others: list[int] = []
    time_wait = False
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or int(fields[1].rpartition(":")[2], 16) != port:
                continue
            inode = int(fields[9])
            if inode:
                (listening if fields[3] == _LISTEN else others).append(inode)
            time_wait = time_wait or fields[3] == _TIME_WAIT
    return listening + others, time_wait


def _pids_holding(inodes: set[int]) -> dict[int, int]:
    """Socket inode -> the pid of a process holding it, for those of ``inodes`` found."""
    found: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inode = int(target[8:-1])
                if inode in inodes:
                    found.setdefault(inode, int(entry.name))
        if len(found) == len(inodes):
            break
    return found


def _command(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    command = " ".join(raw.decode(errors="replace").replace("\0", " ").split())  # one line
    if len(command) > _COMMAND_CHARS:
        command = command[: _COMMAND_CHARS - 3] + "..."
    return command or "?"
