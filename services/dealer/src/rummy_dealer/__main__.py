"""``python -m rummy_dealer``: run the dealer until SIGTERM."""

from rummy_dealer.bootstrap import main

main()
