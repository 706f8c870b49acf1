"""``rummy backup`` and ``rummy restore``: the event log, the services' database and fairness's
seeds in one encrypted archive, and back into a fresh broker and database with every stored
offset carried over (``docs/operations.md#backups``).

Modules, one job each: ``sealed`` (the archive's encryption and key files), ``layout`` (the
files inside and their manifest), ``offsets`` (old offsets to new), ``take`` (the backup),
``restore`` (the restore), ``command`` (the click commands).
"""
