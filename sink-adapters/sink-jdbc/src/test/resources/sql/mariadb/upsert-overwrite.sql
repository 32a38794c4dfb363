INSERT INTO `orders` (`id`, `status`, `amount`, `kafka_topic`, `kafka_partition`, `kafka_offset`, `kafka_timestamp`, `kafka_log_time`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE `status` = VALUES(`status`), `amount` = VALUES(`amount`), `kafka_log_time` = VALUES(`kafka_log_time`), `kafka_timestamp` = VALUES(`kafka_timestamp`), `kafka_offset` = VALUES(`kafka_offset`), `kafka_partition` = VALUES(`kafka_partition`), `kafka_topic` = VALUES(`kafka_topic`)
