"""Inbound adapters of the dealer: the gRPC servicer and the table-events reactor (wired by
``rummy_dealer.bootstrap`` only)."""
