"""``python -m rummy_clock``: run the clock until SIGTERM."""

from rummy_clock.bootstrap import main

main()
