"""Indian 13-card points rummy (Bombay Baazi): its own commands, events, state machine and view.

Everything that names Indian-only concepts (the declare with a card laid face down, the wrong
declare, first and middle drops) lives in this package; the rest of ``rummy_rules`` does not
import it (an import-linter contract in the root ``pyproject.toml`` checks this).
"""

from .commands import Declare, Drop
from .decide import auto_discard, decide, fixed_card_order
from .events import DeclarationRejected, Declared, DropKind, PlayerDropped
from .rules import INDIAN_POINTS_VARIANT, IndianPointsRules, bombay_baazi
from .state import HandState, Phase, SeatState, SeatStatus, apply
from .variant import INDIAN_POINTS, IndianPoints, player_view

__all__ = [
    "INDIAN_POINTS",
    "INDIAN_POINTS_VARIANT",
    "Declare",
    "DeclarationRejected",
    "Declared",
    "Drop",
    "DropKind",
    "HandState",
    "IndianPoints",
    "IndianPointsRules",
    "Phase",
    "PlayerDropped",
    "SeatState",
    "SeatStatus",
    "apply",
    "auto_discard",
    "bombay_baazi",
    "decide",
    "fixed_card_order",
    "player_view",
]
