"""The hypothesis profiles of the repository, and how many examples a property runs in each.

Profile ``ci`` (derandomized, no deadline) is loaded when ``CI`` is true, ``dev`` otherwise;
``HYPOTHESIS_PROFILE`` picks another registered profile. The plugin imports this module, so the
profiles are registered and loaded before any test module is collected.

A long property search states both counts: ``@settings(max_examples=examples(ci=2000, dev=100))``
runs 2,000 examples under CI (the full search, every run) and 100 in the developer's run, which
draws new random examples each time (profile ``dev`` is not derandomized), so the local runs add
up to more than one CI run while each stays short (README.md#tests).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def in_ci() -> bool:
    """True when the ``CI`` environment variable says so (``true``, ``1`` or ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The loaded profile's name.
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev")
settings.load_profile(PROFILE)


def examples(*, ci: int, dev: int) -> int:
    """``max_examples`` for a property: ``ci`` under any profile but ``dev``, ``dev`` under it.

    Raises ValueError unless ``1 <= dev <= ci`` (the developer's run never searches further).
    """
    if not 1 <= dev <= ci:
        raise ValueError(f"examples need 1 <= dev <= ci, got dev={dev}, ci={ci}")
    return dev if PROFILE == "dev" else ci
