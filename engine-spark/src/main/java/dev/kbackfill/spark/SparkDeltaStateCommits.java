package dev.kbackfill.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.kbackfill.sink.delta.DeltaStateCommits;
import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.DeltaOperations;
import org.apache.spark.sql.delta.OptimisticTransaction;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.DomainMetadata;
import org.apache.spark.sql.delta.actions.SetTransaction;

/**
 * A job's state, its reset and the tombstone ledger committed by delta-spark, the writer of the wave's rows, to a
 * table whose features Delta Kernel cannot write (generated columns, CHECK constraints): in the driver, where a
 * Spark session is active. The commit starts from the version kbackfill read; one found moved on is stale.
 */
public final class SparkDeltaStateCommits implements DeltaStateCommits {

    @Override
    public boolean available() {
        try {
            return session().isPresent();
        } catch (LinkageError e) {
            return false; // the engine's classes without Spark's
        }
    }

    private static Optional<SparkSession> session() {
        scala.Option<SparkSession> active = SparkSession.getActiveSession();
        scala.Option<SparkSession> any = active.isDefined() ? active : SparkSession.getDefaultSession();
        return any.isDefined() && !any.get().sparkContext().isStopped() ? Optional.of(any.get()) : Optional.empty();
    }

    @Override
    public void commit(String path, long readVersion, Map<String, String> domains, Set<String> removed,
                       Optional<Map.Entry<String, Long>> transaction) {
        SparkSession spark = session().orElseThrow(() -> new IllegalStateException("no Spark session"));
        OptimisticTransaction txn = DeltaLog.forTable(spark, path).startTransaction();
        if (txn.readVersion() != readVersion) {
            throw DeltaEngineSupport.anotherWriterCommitted("another writer committed to " + path + " (version "
                    + txn.readVersion() + ") since kbackfill read its version " + readVersion, null);
        }
        List<Action> actions = new ArrayList<>();
        domains.forEach((domain, configuration) -> actions.add(new DomainMetadata(domain, configuration, false)));
        removed.forEach(domain -> actions.add(new DomainMetadata(domain, "", true)));
        transaction.ifPresent(t -> actions.add(new SetTransaction(t.getKey(), t.getValue(),
                scala.Option.apply((Object) System.currentTimeMillis()))));
        try {
            txn.commit(scala.jdk.javaapi.CollectionConverters.asScala(actions).toList(),
                    DeltaOperations.ManualUpdate$.MODULE$);
        } catch (io.delta.exceptions.DeltaConcurrentModificationException e) {
            throw DeltaEngineSupport.anotherWriterCommitted("another writer committed to " + path + " while kbackfill committed a job's "
                    + "state: " + e.getMessage(), e);
        }
    }
}
