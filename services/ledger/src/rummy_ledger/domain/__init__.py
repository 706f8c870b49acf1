"""The ledger's pure domain (no I/O, no clock, no psycopg, kafka or grpc): accounts, a hand's
stakes and settlement, grants (:mod:`.accounts`) and a match's money (:mod:`.matches`)."""
