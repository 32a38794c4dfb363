MERGE INTO "orders" t
USING (VALUES (CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))) AS i ("id", "status", "amount", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time") ON t."id" = i."id"
WHEN NOT MATCHED THEN INSERT ("id", "status", "amount", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_log_time")
VALUES (i."id", i."status", i."amount", i."kafka_topic", i."kafka_partition", i."kafka_offset", i."kafka_timestamp", i."kafka_log_time")
