package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks a stored plan (a plan file, or the frozen plan of a job being resumed) against the live topic before any
 * of it is read, so that a plan made for another log is refused rather than read at meaningless offsets:
 * <ul>
 *   <li>the cluster id and the topic id must be the plan's: a topic deleted and recreated under the same name, a
 *       plan file whose topic name was edited, or another cluster is a {@link RequestException} naming both ids;</li>
 *   <li>every partition of the plan must exist;</li>
 *   <li>what is left to read must still be in the log: a start below the log start offset is data loss
 *       ({@link DataLossException}, unless the request allows loss, when the reader counts it);</li>
 *   <li>no range may end past the partition's end offset (at the plan's isolation level): such a plan was not made
 *       against this log, and a reader would wait for offsets that do not exist.</li>
 * </ul>
 */
public final class PlanCheck {

    private PlanCheck() {
    }

    /**
     * @param plan the stored plan
     * @param live the topic as it is now ({@link OffsetSource#describe})
     * @param next          per partition, the first offset still to read (a partition not named starts at its range
     *                      start)
     * @param allowDataLoss whether offsets deleted since planning may be skipped (the reader counts them): the
     *                      current run's choice, which may differ from the plan's
     * @throws RequestException     if the plan was made for another topic or cluster, or ends past the log
     * @throws DataLossException    if offsets still to read were deleted and loss is not allowed
     */
    public static void check(Plan plan, OffsetSource source, TopicInfo live, Map<Integer, Long> next,
                             boolean allowDataLoss) {
        check(plan, source, live, next, allowDataLoss, null);
    }

    /**
     * {@link #check(Plan, OffsetSource, TopicInfo, Map, boolean)} for a plan that reads {@code archive} (or null):
     * offsets still to read below the log start are not lost where the archive holds them.
     */
    public static void check(Plan plan, OffsetSource source, TopicInfo live, Map<Integer, Long> next,
                             boolean allowDataLoss, Archive archive) {
        if (plan.clusterId() != null && live.clusterId() != null && !plan.clusterId().equals(live.clusterId())) {
            throw new RequestException("the plan of topic " + plan.topic() + " was made on cluster " + plan.clusterId()
                    + ", but the cluster reached has id " + live.clusterId() + "; make a new plan with 'kbackfill plan' "
                    + "against this cluster");
        }
        if (!plan.topicId().equals(live.topicId())) {
            throw new RequestException("the plan was made for topic " + plan.topic() + " with id " + plan.topicId()
                    + ", but topic " + live.topic() + " now has id " + live.topicId() + " (deleted and recreated, or "
                    + "the plan edited): its offsets mean nothing in this log; make a new plan with 'kbackfill plan'");
        }
        List<Integer> missing = plan.partitions().stream().map(PartitionRange::partition)
                .filter(p -> !live.partitions().contains(p)).toList();
        if (!missing.isEmpty()) {
            throw new RequestException("the plan names partition(s) " + missing + " that topic " + live.topic()
                    + " does not have (partitions " + live.partitions() + "); make a new plan with 'kbackfill plan'");
        }
        Map<Integer, long[]> left = new TreeMap<>(); // partition -> [from, end)
        for (PartitionRange r : plan.partitions()) {
            long from = Math.max(r.start(), next.getOrDefault(r.partition(), r.start()));
            if (from < r.end()) {
                left.put(r.partition(), new long[] {from, r.end()});
            }
        }
        if (left.isEmpty()) {
            return;
        }
        Set<Integer> partitions = left.keySet();
        Map<Integer, Long> ends = source.endOffsets(plan.topic(), partitions, plan.request().isolationLevel());
        List<String> pastEnd = new ArrayList<>();
        left.forEach((p, range) -> {
            long end = ends.getOrDefault(p, Long.MAX_VALUE);
            if (range[1] > end) {
                pastEnd.add("partition " + p + " ends at offset " + range[1] + " but the log ends at " + end);
            }
        });
        if (!pastEnd.isEmpty()) {
            throw new RequestException("the plan of topic " + plan.topic() + " reaches past the end of the log ("
                    + String.join("; ", pastEnd) + " under " + plan.request().isolationLevel().toString().toLowerCase()
                    + "): it was not made against this log, or the log was truncated; make a new plan with "
                    + "'kbackfill plan'");
        }
        if (allowDataLoss) {
            return;
        }
        Map<Integer, Long> starts = source.logStartOffsets(plan.topic(), partitions);
        Map<Integer, Archive.Extent> archived = archive == null ? Map.of() : archive.extents(plan.topic(), partitions);
        List<String> lost = new ArrayList<>();
        left.forEach((p, range) -> {
            long logStart = starts.getOrDefault(p, 0L);
            Archive.Extent e = archived.get(p);
            if (e != null && e.first() <= range[0] && e.end() >= Math.min(logStart, range[1])) {
                return; // the archive holds what retention deleted
            }
            if (range[0] < logStart) {
                lost.add("partition " + p + " offsets " + range[0] + " to " + (Math.min(logStart, range[1]) - 1));
            }
        });
        if (!lost.isEmpty()) {
            throw new DataLossException("records of " + plan.topic() + " still to backfill were deleted (retention or "
                    + "deleteRecords) since planning: " + String.join("; ", lost) + "; pass " + ALLOW_DATA_LOSS + " to write "
                    + "what is left and count the rest as lost");
        }
    }
}
