"""Bot players: a pure strategy (``strategy``) and a gRPC client per seat (``client``)."""
