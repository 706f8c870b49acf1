"""``python -m rummy_table``: run the table service until SIGTERM."""

from rummy_table.bootstrap import main

main()
