// KafkaTests: filled in by its issue.
