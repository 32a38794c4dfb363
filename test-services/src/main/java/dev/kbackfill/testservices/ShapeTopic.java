package dev.kbackfill.testservices;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A seeded random topic of records as production topics carry them, for the row shape's property tests: two
 * partitions of the same length; fields that come and go ({@code s}, {@code n}, {@code opt}, a nested object
 * {@code nested}, a boolean {@code flag}); a number {@code n} that is whole, fractional or beyond a double's 53 bits;
 * a header {@code src} now and then; tombstones and undecodable records. The first {@link #SEED_RECORDS} records of
 * each partition carry every field (the number whole in one, fractional in the other) under keys that recur nowhere
 * else, so that a table created from them has every column.
 */
public final class ShapeTopic {

    /** Records per partition that carry every field. */
    public static final int SEED_RECORDS = 2;
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();

    private ShapeTopic() {
    }

    /** {@code perPartition} records for each of two partitions of {@code topic}, in the order to send them. */
    public static List<ProducerRecord<byte[], byte[]>> records(String topic, long seed, int perPartition) {
        Random random = new Random(seed);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < perPartition; i++) {
            for (int p = 0; p < 2; p++) {
                long ts = T0.toEpochMilli() + i * 1000L + p * 7L + (random.nextInt(4) == 0 ? -random.nextInt(3000) : 0);
                String key;
                String value;
                boolean header;
                if (i < SEED_RECORDS) {
                    key = "seed" + p + i;
                    value = value(random, true, i == 0 ? "7" : "2.5");
                    header = true;
                } else {
                    key = "k" + random.nextInt(6);
                    int kind = random.nextInt(20);
                    value = kind == 0 ? null : kind == 1 ? "{not json" : value(random, false, null);
                    header = random.nextInt(10) < 7;
                }
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, p, ts, key.getBytes(StandardCharsets.UTF_8),
                        value == null ? null : value.getBytes(StandardCharsets.UTF_8));
                if (header) {
                    r.headers().add("src", ("app" + random.nextInt(3)).getBytes(StandardCharsets.UTF_8));
                }
                records.add(r);
            }
        }
        return records;
    }

    /**
     * Random options that shape rows: always {@code --on-error skip} first (the topic has poison records), then
     * perhaps a {@code --where}, {@code --columns}, {@code --rename} and {@code --header-columns}.
     */
    public static List<String> options(long seed) {
        Random random = new Random(seed * 31 + 7);
        List<String> options = new ArrayList<>(List.of("--on-error", "skip"));
        if (random.nextBoolean()) {
            options.addAll(List.of("--where", "value == null || !has(value.opt) || value.opt != 'o1'"));
        }
        boolean columns = random.nextInt(3) == 0;
        if (columns) {
            options.addAll(List.of("--columns", "s,n,opt"));
        }
        if (random.nextBoolean()) {
            options.addAll(List.of("--rename", "opt=option"));
        }
        if (random.nextBoolean() || columns) {
            options.addAll(List.of("--header-columns", "src"));
        }
        return options;
    }

    /** A record's value: fields come and go; the number is whole, fractional or beyond a double's 53 bits. */
    private static String value(Random random, boolean full, String number) {
        ObjectNode v = JSON.createObjectNode();
        if (full || random.nextInt(5) != 0) {
            v.put("s", "s" + random.nextInt(4));
        }
        if (number != null) {
            v.put("n", new BigDecimal(number));
        } else if (random.nextInt(6) != 0) {
            switch (random.nextInt(4)) {
                case 0 -> v.put("n", random.nextInt(1000));
                case 1 -> v.put("n", BigDecimal.valueOf(random.nextInt(100_000), 1 + random.nextInt(3)));
                case 2 -> v.put("n", random.nextBoolean() ? 9_007_199_254_740_993L : 12_345_678_901_234_567L);
                default -> v.put("n", new BigDecimal(random.nextInt(50) + ".25"));
            }
        }
        if (full || random.nextBoolean()) {
            v.put("opt", "o" + random.nextInt(3));
        }
        if (full || random.nextInt(4) == 0) {
            v.putObject("nested").put("a", random.nextInt(5)).putArray("b").add(random.nextInt(3));
        }
        if (full || random.nextInt(3) == 0) {
            v.put("flag", random.nextBoolean());
        }
        return v.toString();
    }
}
