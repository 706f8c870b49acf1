"""What a secret looks like in a log or a command line (issue 32: "secrets from files, never from
the command line or logs"): a bearer token, a private key, a password."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

#: A JSON Web Token: base64url of a JSON object ("{" encodes as "ey"), a payload and a signature.
JWT = re.compile(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}")
#: A URL carrying a password in its authority (``scheme://user:pass@``).
URL_WITH_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@")


def private_key_lines(paths: Iterable[Path]) -> set[str]:
    """The base64 lines of the body of every PEM private key among ``paths`` (other files are
    passed over)."""
    lines: set[str] = set()
    for path in paths:
        text = path.read_text(errors="replace")
        if "PRIVATE KEY" in text:
            lines |= {
                line.strip() for line in text.splitlines() if line.strip() and "-----" not in line
            }
    return lines


def leaks(text: str, key_lines: Iterable[str] = (), passwords: Iterable[str] = ()) -> list[str]:
    """Each secret ``text`` holds, described without repeating it whole: any JSON Web Token,
    any URL with a password, a PEM private key block, a line of one of ``key_lines`` (the
    bodies of the private keys held), ``:<password>@`` for each of ``passwords``."""
    found = [f"a token {m.group()[:12]}..." for m in JWT.finditer(text)]
    found += [
        f"a URL with a password {m.group()[:20]}..." for m in URL_WITH_PASSWORD.finditer(text)
    ]
    if "PRIVATE KEY" in text:
        found.append("a PEM private key block")
    found += [f"a private key's line {line[:8]}..." for line in key_lines if line in text]
    found += [f"the password of {p[:2]}..." for p in passwords if p and f":{p}@" in text]
    return found
