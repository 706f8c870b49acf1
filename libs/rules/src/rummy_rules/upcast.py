"""The one upcast step of the rules library's JSON (:mod:`rummy_rules.json_form`): a record
written by an older build (a proof bundle's events, a table snapshot's hand state, a kept record)
becomes the current shape before it is decoded, so every reader (hosts, replay, the verifier)
sees current shapes only. :func:`rummy_rules.json_form.from_dict` calls :func:`upcast`; nothing
else reads old shapes.

The deprecated shapes it reads (rows ``json-class-tag``, ``json-money-suffix`` and
``json-rule-set-indian`` of the one list of deprecated paths,
``docs/rules/event-tags.md#deprecated``, which says when each may be dropped: ``#may-drop``;
``tests/data/kept`` holds records of the first two):

============================================  ====================================  ===========
old shape                                     current shape                         written
                                                                                    until
============================================  ====================================  ===========
a message tagged with its Python class name   its namespaced tag (``table.Hand      2026-12-02
(``{"type": "HandStarted"}``), at any depth   Started``): :data:`LEGACY_TAGS`, the
                                              one table of old tags
a money field ``<name>`` + the old suffix     ``<name>_hundredths`` (one unit, one  2026-12-02
(``point_value_`` + ``cents``, ...), at any   name: hundredths of a House Token)
depth of the record
a rule set's Indian options under ``indian``  ``options``, tagged ``indian.Points    2026-12-01
(untagged; before a rule set carried each     Rules`` (:data:`OLD_INDIAN_OPTIONS`;
variant's options under one name)             ``options`` beside it: kept, ``indian``
                                              dropped)
============================================  ====================================  ===========

The old shapes of the other layers are upcast in one module each: the table stream's protobuf
payloads and recorded rule sets in ``rummy_game.upcast``, the dealer's SeedsLocked in
``rummy_dealer.application.upcast``, the ledger's rule sets in ``rummy_ledger.application.upcast``,
the browser verifier's bundles in ``web/verify/verify.js``
(``upcast``, the same three shapes as here; ``upcastBundle`` also gives a bundle written before
``deal_shape`` the deal every such bundle had, a field no Python reader reads).

The old money suffix is spelled in two parts below so that a search of the source for it finds
only kept records.
"""

from __future__ import annotations

from typing import Any

#: The one table of old tags: every message's bare class name, as records were tagged before the
#: tags were namespaced (rules library 1.x), -> its tag now. Frozen: a message added since has
#: no old tag, and a class renamed keeps its tag (``@json_form.tag``), so nothing is added here.
LEGACY_TAGS: dict[str, str] = {
    "DeclareBigGin": "gin.DeclareBigGin",
    "DeclareGin": "gin.DeclareGin",
    "GinHand": "gin.Hand",
    "HandRules": "gin.HandRules",
    "GinHandScored": "gin.HandScored",
    "GinHandStarted": "gin.HandStarted",
    "GinKnock": "gin.Knock",
    "GinKnocked": "gin.Knocked",
    "GinLayoff": "gin.Layoff",
    "GinOptions": "gin.Options",
    "GinPassUpcard": "gin.PassUpcard",
    "GinSeatForfeited": "gin.SeatForfeited",
    "StartGinHand": "gin.StartHand",
    "GinState": "gin.State",
    "GinUpcardPassed": "gin.UpcardPassed",
    "GinWallReached": "gin.WallReached",
    "DeclarationRejected": "indian.DeclarationRejected",
    "Declare": "indian.Declare",
    "Declared": "indian.Declared",
    "Drop": "indian.Drop",
    "HandState": "indian.HandState",
    "PlayerDropped": "indian.PlayerDropped",
    "IndianPointsRules": "indian.PointsRules",
    "AbortMatch": "match.AbortMatch",
    "AcceptRejoin": "match.AcceptRejoin",
    "BeginDeal": "match.BeginDeal",
    "DealResult": "match.DealResult",
    "DealScored": "match.DealScored",
    "DealStarted": "match.DealStarted",
    "DealVoided": "match.DealVoided",
    "DeclineRejoin": "match.DeclineRejoin",
    "GameEnded": "match.GameEnded",
    "GameStarted": "match.GameStarted",
    "LeaveMatch": "match.LeaveMatch",
    "MatchAborted": "match.MatchAborted",
    "MatchEnded": "match.MatchEnded",
    "MatchStarted": "match.MatchStarted",
    "MoneyReserved": "match.MoneyReserved",
    "RecordDeal": "match.RecordDeal",
    "RecordDealAborted": "match.RecordDealAborted",
    "RejoinDeclined": "match.RejoinDeclined",
    "RejoinNotHeld": "match.RejoinNotHeld",
    "RejoinOffered": "match.RejoinOffered",
    "RejoinRefused": "match.RejoinRefused",
    "Rejoined": "match.Rejoined",
    "RequestSplit": "match.RequestSplit",
    "SeatEliminated": "match.SeatEliminated",
    "SeatForfeitedGame": "match.SeatForfeitedGame",
    "SeatLeft": "match.SeatLeft",
    "SplitRequested": "match.SplitRequested",
    "StartMatch": "match.StartMatch",
    "TieBreakDue": "match.TieBreakDue",
    "AbortHand": "table.AbortHand",
    "CardDiscarded": "table.CardDiscarded",
    "CardDrawn": "table.CardDrawn",
    "ClientSeedContributed": "table.ClientSeedContributed",
    "ContributeClientSeed": "table.ContributeClientSeed",
    "Deal": "table.Deal",
    "Discard": "table.Discard",
    "DrawFromDiscardPile": "table.DrawFromDiscardPile",
    "DrawFromStock": "table.DrawFromStock",
    "HandAborted": "table.HandAborted",
    "HandDealt": "table.HandDealt",
    "HandEnded": "table.HandEnded",
    "HandStarted": "table.HandStarted",
    "LeaveHand": "table.LeaveHand",
    "RecordSeedCommitment": "table.RecordSeedCommitment",
    "RecordStakeReserved": "table.RecordStakeReserved",
    "RecordStockReshuffled": "table.RecordStockReshuffled",
    "SeedCommitted": "table.SeedCommitted",
    "SeedWindowOpened": "table.SeedWindowOpened",
    "SeedsLocked": "table.SeedsLocked",
    "StakeReserved": "table.StakeReserved",
    "StartHand": "table.StartHand",
    "StockExhausted": "table.StockExhausted",
    "StockReshuffled": "table.StockReshuffled",
    "TurnStarted": "table.TurnStarted",
    "TurnTimedOut": "table.TurnTimedOut",
    "TurnTimeout": "table.TurnTimeout",
    "Rummy500GoOut": "rummy500.GoOut",
    "Rummy500LaidOff": "rummy500.LaidOff",
    "Rummy500LayOff": "rummy500.LayOff",
    "Rummy500Layoff": "rummy500.Layoff",
    "Rummy500LayoffTarget": "rummy500.LayoffTarget",
    "Rummy500Meld": "rummy500.Meld",
    "Rummy500Melded": "rummy500.Melded",
    "Rummy500Options": "rummy500.Options",
    "Rummy500PileTaken": "rummy500.PileTaken",
    "Rummy500Play": "rummy500.Play",
    "Rummy500RoundEnded": "rummy500.RoundEnded",
    "Rummy500SeatLeft": "rummy500.SeatLeft",
    "Rummy500SeatScore": "rummy500.SeatScore",
    "Rummy500State": "rummy500.State",
    "Rummy500TakeFromPile": "rummy500.TakeFromPile",
    "Rummy500TookNothing": "rummy500.TookNothing",
    "TableMeld": "rummy500.TableMeld",
}

#: A rule set's key for its Indian options (untagged) before a rule set carried each variant's
#: options under :data:`OPTIONS_KEY`, tagged (rules library 1.x): the key and the tag they are
#: read under. The options' fields have not changed since.
OLD_INDIAN_OPTIONS = "indian"
OPTIONS_KEY = "options"
INDIAN_OPTIONS_TAG = "indian.PointsRules"

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
        if key == OLD_INDIAN_OPTIONS and isinstance(value, dict):
            changed = True
            if OPTIONS_KEY not in data:  # both: the current one is kept
                out[OPTIONS_KEY] = {"type": INDIAN_OPTIONS_TAG, **upcast(value)}
            continue
        if key == "type" and isinstance(value, str) and value in LEGACY_TAGS:
            out[key] = LEGACY_TAGS[value]
            changed = True
            continue
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
