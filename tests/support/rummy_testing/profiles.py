"""The hypothesis profiles of the repository, and how many examples a property runs in each.

``HYPOTHESIS_PROFILE`` names the profile to load, ``dev`` when unset. README's test command sets
``ci`` (derandomized, no deadline) for the whole suite, ``bash deploy/local/test.sh`` with no
arguments, which is what CI runs; any other run (a selection, the unit tier, plain ``pytest``)
gets ``dev``. No other variable (``CI`` included) is read: the same command runs the same examples
on every machine. The plugin imports this module, so the profiles are registered and loaded
before any test module is collected.

A long property search states both counts: ``@settings(max_examples=examples(ci=2000, dev=100))``
runs 2,000 examples in the whole suite, as CI runs it (the full search, every run), and 100 in a
developer's selection, which draws new random examples each time (profile ``dev`` is not
derandomized), so those runs add up to more than one whole-suite run while each stays short
(docs/testing.md#tests).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The loaded profile's name.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or "dev"
settings.load_profile(PROFILE)


def examples(*, ci: int, dev: int) -> int:
    """``max_examples`` for a property: ``ci`` under any profile but ``dev``, ``dev`` under it.

    Raises ValueError unless ``1 <= dev <= ci`` (the developer's run never searches further).
    """
    if not 1 <= dev <= ci:
        raise ValueError(f"examples need 1 <= dev <= ci, got dev={dev}, ci={ci}")
    return dev if PROFILE == "dev" else ci
