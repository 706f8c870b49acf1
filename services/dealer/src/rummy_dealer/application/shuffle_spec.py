"""The dealer's answer to "which shuffle do you implement, and where is it written down?"."""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.shuffle import SHUFFLE_VERSION

#: The shuffle spec's page, a path in the repository.
SPEC_REFERENCE = "docs/rules/shuffle-spec.md"


@dataclass(frozen=True, slots=True)
class ShuffleSpec:
    """``shuffle_version``: the shuffle this dealer deals with (``rummy_rules.shuffle``);
    ``spec_reference``: where it is written down (a path in the repository)."""

    shuffle_version: str
    spec_reference: str


def shuffle_spec() -> ShuffleSpec:
    """The shuffle this build implements and its spec's page."""
    return ShuffleSpec(shuffle_version=SHUFFLE_VERSION, spec_reference=SPEC_REFERENCE)
