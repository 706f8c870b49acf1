"""The fairness service's inbound adapters: the gRPC servicer (:mod:`.grpc`) and the
table-events reactor (:mod:`.events`). Only bootstrap wires them."""
