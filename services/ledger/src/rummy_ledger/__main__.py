"""``python -m rummy_ledger``: run the ledger service until SIGTERM (see ``bootstrap``)."""

from rummy_ledger.bootstrap import main

main()
