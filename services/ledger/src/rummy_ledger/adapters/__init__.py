"""Adapters of the ledger: PostgreSQL (db)."""
