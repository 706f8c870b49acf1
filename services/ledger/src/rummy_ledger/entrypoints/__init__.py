"""The ledger's inbound adapters: the gRPC servicer (:mod:`.grpc`) and the table-events reactor
(:mod:`.events`). Each decodes, makes one application call and encodes; only bootstrap wires
them."""
