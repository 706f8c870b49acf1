"""The game host shared by the table service and ops: the table stream's event codec
(``stream_payloads``, a match's ``match_payloads``, the ledger's names of a match's money
purposes ``money_purposes``) and a hand's proof bundle (``proof``). The table aggregate and the
match host are the table service's domain (``rummy_table.domain``)."""
