/**
 * The range resolver: turns a backfill request into a {@link dev.kbackfill.resolver.Plan} of half-open offset
 * ranges, one per partition, with a {@link dev.kbackfill.resolver.Note} for every adjustment.
 *
 * <p>Entry points: {@link dev.kbackfill.resolver.BackfillRequest#builder(String)} to describe what to backfill,
 * {@link dev.kbackfill.resolver.KafkaOffsetSource#create(java.util.Map)} and
 * {@link dev.kbackfill.resolver.RangeResolver#resolve} to resolve it, and
 * {@link dev.kbackfill.resolver.Plan#toJson()} / {@link dev.kbackfill.resolver.Plan#fromJson(String)} to store it.
 * Ranges are half-open: see {@link dev.kbackfill.resolver.PartitionRange}. This package depends on
 * kafka-clients and Jackson only.
 */
package dev.kbackfill.resolver;
