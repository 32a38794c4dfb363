DELETE FROM "orders"
WHERE "id" = ? AND ("kafka_offset" IS NOT NULL AND (COALESCE("kafka_log_time", "kafka_timestamp") < ? OR (COALESCE("kafka_log_time", "kafka_timestamp") = ? AND ("kafka_partition" < ? OR ("kafka_partition" = ? AND ("kafka_offset" < ? OR ("kafka_offset" = ? AND COALESCE("kafka_topic", ?) < ?)))))))
