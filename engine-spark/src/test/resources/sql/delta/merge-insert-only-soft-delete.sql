MERGE INTO delta.`/lake/orders` AS t
USING kbackfill_wave_3 AS s ON t.`id` = s.`id`
WHEN NOT MATCHED AND NOT s.`__kbackfill_tombstone`
  THEN INSERT (`id`, `status`, `amount`, `kafka_topic`, `kafka_partition`, `kafka_offset`, `kafka_timestamp`, `kafka_log_time`, `kafka_deleted`) VALUES (s.`id`, s.`status`, s.`amount`, s.`kafka_topic`, s.`kafka_partition`, s.`kafka_offset`, s.`kafka_timestamp`, s.`kafka_log_time`, s.`kafka_deleted`)
