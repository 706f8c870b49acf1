"""Which partition of a topic a stream's events go to."""

from __future__ import annotations

from kafka.partitioner.default import murmur2


def partition_for(stream_id: str, partitions: int) -> int:
    """The partition (0 to ``partitions`` - 1) a stream's events go to: Kafka's default murmur2
    partitioner on the key. Matches the Java and kafka-python producers' choice for the UTF-8
    key ``stream_id``. Raises ValueError when ``partitions`` < 1."""
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    return int(murmur2(stream_id.encode()) & 0x7FFFFFFF) % partitions
