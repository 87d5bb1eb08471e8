"""Helpers to try and run lakecdc locally: an embedded Kafka-protocol broker, sample CDC streams."""
