"""The console scripts' one entry wrapper (``rummy`` and ``rummy-rules``, see their pyproject's
``[project.scripts]``): a reader that goes away (``rummy replay --all | head -1``) ends the run
quietly, with exit status :data:`CLOSED_PIPE_STATUS` and no ``BrokenPipeError`` traceback, from
the main thread, from any other thread (the demo's tables print their hands from theirs: the
main thread is then interrupted, as by Ctrl-C, so that the command stops what it started) and
from the interpreter's last flush at exit.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import NoReturn

#: Exit status of a run whose reader closed the pipe: the output was cut short (as Python's
#: documentation of SIGPIPE and click do; a shell's ``head`` does not look at it).
CLOSED_PIPE_STATUS = 1

_closed = threading.Event()  # set once a write met the closed pipe


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that nothing more written, nor the interpreter's
    own flush at exit, meets the closed pipe again (Python's documented way)."""
    _closed.set()
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (a test's capture)
        pass


#: The signal another thread sends the main thread when it met the closed pipe: one of the
#: wrapper's own, so that it reaches the main thread also where SIGINT is ignored (a command
#: started in the background by a non-interactive shell inherits SIGINT ignored).
WAKE_SIGNAL = signal.SIGUSR1


def _woken(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _interrupt_main() -> None:
    """Ctrl-C for the main thread, so that the command's own path for it stops what it started:
    :data:`WAKE_SIGNAL` sent to that thread itself, whose handler (installed by
    :func:`run_console`) raises KeyboardInterrupt there; the signal also cuts short a sleep or
    a wait it is in (``_thread.interrupt_main`` only sets a flag that a sleeping thread sees
    when it wakes)."""
    main = threading.main_thread().ident
    if main is not None and signal.getsignal(WAKE_SIGNAL) is _woken:
        signal.pthread_kill(main, WAKE_SIGNAL)


def _closed_pipe_hook(
    previous: Callable[[threading.ExceptHookArgs], object],
) -> Callable[[threading.ExceptHookArgs], object]:
    def hook(args: threading.ExceptHookArgs) -> object:
        if not issubclass(args.exc_type, BrokenPipeError):
            return previous(args)
        _silence_stdout()
        _interrupt_main()
        return None

    return hook


def run_console(entry: Callable[[], int | None]) -> NoReturn:
    """Run ``entry`` (a console script's body: returns its exit status, or raises SystemExit)
    and exit with its status; a closed standard output ends the run with
    :data:`CLOSED_PIPE_STATUS` and nothing on standard error, a ``BrokenPipeError`` in another
    thread is silenced the same way and interrupts the main thread (KeyboardInterrupt, see
    :func:`_interrupt_main`), whose status is then :data:`CLOSED_PIPE_STATUS` too."""
    threading.excepthook = _closed_pipe_hook(threading.excepthook)
    signal.signal(WAKE_SIGNAL, _woken)
    try:
        status: object = CLOSED_PIPE_STATUS
        try:
            status = entry()
        except SystemExit as exit_:
            status = exit_.code
        except KeyboardInterrupt:
            if not _closed.is_set():
                raise
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    raise SystemExit(CLOSED_PIPE_STATUS if _closed.is_set() else status)
