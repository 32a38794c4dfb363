package dev.kbackfill.testsink;

import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.JobLockFile;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.JobStore;

/** The jobs of a {@code rowsfile:} sink, in its file: a batch's save advances them with its rows. */
final class RowsFileJobStore implements JobStore {

    private final RowsFile file;

    RowsFileJobStore(RowsFile file) {
        this.file = file;
    }

    @Override
    public String store() {
        return RowsFileSinkFactory.SCHEME + ":" + file.path();
    }

    @Override
    public String destination() {
        return store();
    }

    @Override
    public void openForJobs() {
        // the file is read where a state is asked for
    }

    @Override
    public AutoCloseable lock(String job) {
        return JobLockFile.acquire(JobLockFile.beside(file.path(), job), job, store());
    }

    @Override
    public Optional<JobState> load(String job) {
        return Optional.ofNullable(file.read().jobs.get(job)).map(JobStateJson::read);
    }

    @Override
    public List<String> jobs() {
        return List.copyOf(file.read().jobs.keySet());
    }

    @Override
    public void begin(JobState state) {
        RowsFile.Contents contents = file.read();
        contents.jobs.put(state.job(), JobStateJson.write(state));
        file.save(contents);
    }

    @Override
    public boolean reset(String job) {
        RowsFile.Contents contents = file.read();
        boolean known = contents.jobs.remove(job) != null;
        if (known) {
            file.save(contents);
        }
        return known;
    }

    @Override
    public void close() {
    }
}
