INSERT INTO "orders" ("id", "status", "amount", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time")
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT ("id")
DO UPDATE SET "status" = EXCLUDED."status", "amount" = EXCLUDED."amount", "kafka_topic" = EXCLUDED."kafka_topic", "kafka_partition" = EXCLUDED."kafka_partition", "kafka_offset" = EXCLUDED."kafka_offset", "kafka_timestamp" = EXCLUDED."kafka_timestamp", "kafka_log_time" = EXCLUDED."kafka_log_time"
