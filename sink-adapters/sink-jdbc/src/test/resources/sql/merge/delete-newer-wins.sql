DELETE FROM "orders"
WHERE "id" = ? AND ("kafka_offset" IS NULL OR ("kafka_partition" = ? AND COALESCE("kafka_topic", ?) = ? AND "kafka_offset" <= ?) OR (("kafka_partition" <> ? OR COALESCE("kafka_topic", ?) <> ?) AND ("kafka_timestamp" < ? OR ("kafka_timestamp" = ? AND ("kafka_partition" < ? OR ("kafka_partition" = ? AND ("kafka_offset" < ? OR ("kafka_offset" = ? AND "kafka_topic" < ?))))))))
