DELETE FROM "orders"
WHERE "id" = ?
