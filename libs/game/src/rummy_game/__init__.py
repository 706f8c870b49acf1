"""The game host shared by the table service and ops: the table aggregate (``table``), the
table stream's event codec (``stream_payloads``) and a hand's proof bundle (``proof``)."""
