"""A live broker for tests: :mod:`tests.live.kafka_like` writes a data dir as Kafka's log
layer does while kmeta reads it; :mod:`tests.live.survey` counts what kmeta says beside it."""
