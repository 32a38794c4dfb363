package dev.kbackfill.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.read.ReadAhead;
import dev.kbackfill.core.read.RecordSource;
import dev.kbackfill.core.record.ConfluentAvro;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.RangeResolver;
import org.apache.kafka.common.IsolationLevel;

/**
 * kbackfill's read path without a sink: plan earliest..latest, read it as a run does (the BoundedReader polled ahead
 * on a thread of its own by ReadAhead), and with {@code decode} decode every record on the handler's thread, as a
 * run decodes every record that needs its value. {@code decode-inline} decodes on the polling thread instead, as
 * runs did before ReadAhead (the lever's own figure). {@code decode-avro} decodes Confluent-framed Avro values of
 * {@link Benchmark#AVRO_SCHEMA}, whose registry is a loopback server in this process. Prints
 * {@code records=N bytes=B seconds=S plan=S}. Usage: {@code ReadOnly BOOTSTRAP TOPIC raw|decode|decode-inline|decode-avro}.
 */
public final class ReadOnly {

    private ReadOnly() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        boolean decode = args[2].startsWith("decode");
        boolean ahead = !args[2].equals("decode-inline");
        long started = System.nanoTime();
        Map<String, Object> config = Map.of("bootstrap.servers", bootstrap);
        Plan plan;
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            plan = new RangeResolver(source).resolve(BackfillRequest.builder(topic).from("earliest").to("latest").build());
        }
        double planSeconds = (System.nanoTime() - started) / 1e9;
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (PartitionRange r : plan.partitions()) {
            ranges.add(new BoundedReader.Range(r.partition(), r.start(), r.end()));
        }
        LocalRegistry registry = args[2].equals("decode-avro") ? new LocalRegistry().serve(1, "AVRO", Benchmark.AVRO_SCHEMA)
                : null;
        RecordDecoder decoder = registry == null ? new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value",
                List.of()) : new RecordDecoder(Format.STRING, Format.AVRO, "kafka_key", "value", List.of(),
                new ConfluentAvro(registry.start()));
        long[] counts = {0, 0};
        RecordSource bounded = new BoundedReader(topic, config, IsolationLevel.READ_COMMITTED, ranges, false,
                Duration.ofMinutes(2));
        try (RecordSource reader = ahead ? new ReadAhead(bounded, 2) : bounded) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord r : records) {
                    counts[0]++;
                    counts[1] += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                    if (decode) {
                        decoder.decode(r);
                    }
                }
            });
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        if (registry != null) {
            registry.close();
        }
        System.out.printf("records=%d bytes=%d seconds=%.3f plan=%.3f%n", counts[0], counts[1], seconds, planSeconds);
    }
}
