MERGE INTO "orders" t
USING (VALUES (CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))) AS i ("id", "status", "amount", "kafka_partition", "kafka_offset", "kafka_timestamp") ON t."id" = i."id"
WHEN MATCHED AND (t."kafka_offset" IS NULL OR (t."kafka_partition" = i."kafka_partition" AND t."kafka_offset" <= i."kafka_offset") OR (t."kafka_partition" <> i."kafka_partition" AND t."kafka_timestamp" <= i."kafka_timestamp")) THEN UPDATE SET "status" = i."status", "amount" = i."amount", "kafka_partition" = i."kafka_partition", "kafka_offset" = i."kafka_offset", "kafka_timestamp" = i."kafka_timestamp"
WHEN NOT MATCHED THEN INSERT ("id", "status", "amount", "kafka_partition", "kafka_offset", "kafka_timestamp")
VALUES (i."id", i."status", i."amount", i."kafka_partition", i."kafka_offset", i."kafka_timestamp")
