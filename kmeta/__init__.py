"""kmeta: inspect, verify and repair Apache Kafka KRaft metadata logs on disk."""

__version__ = "0.1.0"
