"""``python -m rummy_fairness``: run the fairness service until SIGTERM."""

from rummy_fairness.bootstrap import main

main()
