DELETE FROM `orders`
WHERE `id` = ? AND (`kafka_offset` IS NULL OR (`kafka_partition` = ? AND `kafka_offset` <= ?) OR (`kafka_partition` <> ? AND `kafka_timestamp` <= ?))
