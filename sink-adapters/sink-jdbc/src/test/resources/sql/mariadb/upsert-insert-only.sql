INSERT IGNORE INTO `orders` (`id`, `status`, `amount`, `kafka_partition`, `kafka_offset`, `kafka_timestamp`)
VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)
