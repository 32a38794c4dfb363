package dev.kbackfill.sink.delta;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.delta.kernel.Operation;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterable;

/**
 * A writer process for {@link DeltaObjectStoreIT}: loads the table's snapshot, builds a commit on it, says it is
 * ready and commits once the test says go, so that two of them commit the same version, one after the other. Prints
 * "committed N" or "refused". Arguments: table, barrier folder, name, then KEY=VALUE Hadoop settings.
 */
public final class LogCommitter {

    private LogCommitter() {
    }

    public static void main(String[] args) throws Exception {
        String table = args[0];
        Path barrier = Path.of(args[1]);
        String name = args[2];
        Map<String, String> settings = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            settings.put(kv[0], kv[1]);
        }
        Engine engine = DefaultEngine.create(DeltaFiles.hadoopConfiguration(settings));
        Transaction txn = TableManager.loadSnapshot(table).build(engine)
                .buildUpdateTableTransaction("kbackfill-test", Operation.WRITE)
                .withTransactionId("writer-" + name, 1).withMaxRetries(0).build(engine);
        Files.createFile(barrier.resolve("ready-" + name));
        while (!Files.exists(barrier.resolve("go-" + name))) {
            Thread.sleep(2);
        }
        try {
            System.out.println("committed " + txn.commit(engine, CloseableIterable.emptyIterable()).getVersion());
        } catch (RuntimeException e) {
            // Kernel names a commit file that exists (another writer's) as a conflict it may not retry here
            System.out.println(e instanceof io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException
                    ? "refused" : "failed " + e);
            e.printStackTrace(System.out);
        }
        System.exit(0);
    }
}
