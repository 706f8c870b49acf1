"""A stand-in service for the supervisor's tests: gRPC health SERVING on RUMMY_GRPC_PORT until
SIGTERM; prints its environment's interesting variables so the test can read them in its log."""

import os
import signal
import threading
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
servicer = health.HealthServicer()
servicer.set("", health_pb2.HealthCheckResponse.SERVING)
health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
server.add_insecure_port(f"127.0.0.1:{os.environ['RUMMY_GRPC_PORT']}")
server.start()
for name in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL", "RUMMY_CLOCK_SPEED", "RUMMY_TOPIC_PREFIX"):
    print(f"{name}={os.environ.get(name, '')}", flush=True)
stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
stopped.wait()
server.stop(0)
print("stopped on SIGTERM", flush=True)
