"""``python -m rummy_rules evaluate``: see ``rummy_rules.cli``."""

from rummy_rules.cli import script

script()
