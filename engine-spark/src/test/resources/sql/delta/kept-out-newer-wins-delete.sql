SELECT s.`kafka_partition` AS p, count(*) AS n
FROM kbackfill_wave_3 s
LEFT JOIN kbackfill_table_3 t ON t.`id` = s.`id`
WHERE (s.`__kbackfill_tombstone` AND t.`id` IS NOT NULL) OR (NOT s.`__kbackfill_tombstone` AND NOT (t.`id` IS NOT NULL AND t.`kafka_partition` <=> s.`kafka_partition` AND t.`kafka_offset` <=> s.`kafka_offset` AND t.`kafka_topic` <=> s.`kafka_topic`))
GROUP BY s.`kafka_partition`
