INSERT IGNORE INTO `orders` (`id`, `status`, `amount`, `kafka_topic`, `kafka_partition`, `kafka_offset`, `kafka_timestamp`, `kafka_log_time`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?)
