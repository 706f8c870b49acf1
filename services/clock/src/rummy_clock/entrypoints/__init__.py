"""Inbound adapters of the clock: the gRPC servicer and the event loop (wired by
``rummy_clock.bootstrap`` only)."""
