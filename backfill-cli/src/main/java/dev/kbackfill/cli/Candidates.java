package dev.kbackfill.cli;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.TombstoneMode;

/** The values options take as words, for shell completion ({@code kbackfill completion bash}) and help. */
final class Candidates {

    private Candidates() {
    }

    static final class Conflict implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(ConflictMode.values()).map(ConflictMode::label).iterator();
        }
    }

    static final class Tombstone implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(TombstoneMode.values()).map(TombstoneMode::label).iterator();
        }
    }

    static final class Formats implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return List.of("string", "json", "bytes", "avro", "protobuf", "json-schema").iterator();
        }
    }

    static final class OnError implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return List.of("fail", "skip").iterator();
        }
    }

    static final class LiveWriters implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(dev.kbackfill.core.run.LiveWriter.values()).map(dev.kbackfill.core.run.LiveWriter::label)
                    .iterator();
        }
    }
}
