package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The progress display moves with what is read, redraws while nothing happens, and its counts agree. */
class RunProgressTest {

    @Test
    void plainShowsWhatIsReadBeforeAnythingCommitsAndItsCountsAgree() {
        StringWriter text = new StringWriter();
        try (RunProgress display = new RunProgress(new PrintWriter(text), RunProgress.Mode.plain, "orders")) {
            display.onRead(10_000, 240_000, 10_000, 1_000_000);
            display.onRead(20_000, 240_000, 20_000, 2_000_000); // within five seconds of the first line: not drawn
            display.onProgress(240_000, 240_000, 240_000, 24_000_000);
        }
        List<String> lines = text.toString().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("orders: read 4.2% (10000 of 240000 offsets, 10000 records), committed 0.0% "
                + "(0 offsets)");
        assertThat(lines.get(1)).startsWith("orders: read 100.0% (240000 of 240000 offsets, 240000 records), committed "
                + "100.0% (240000 offsets)").endsWith("ETA 0:00:00");
    }

    @Test
    void theBarIsRedrawnAtLeastOnceASecondWhileTheRunWaits() throws Exception {
        StringWriter text = new StringWriter();
        try (RunProgress display = new RunProgress(new PrintWriter(text), RunProgress.Mode.bar, "orders")) {
            display.onRead(60, 240, 60, 6_000);
            display.onProgress(30, 240, 60, 6_000);
            int drawn = draws(text);
            long deadline = System.nanoTime() + 5_000_000_000L; // the ticker's second, with room on a loaded machine
            while (draws(text) == drawn && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(draws(text)).as("a line drawn by the ticker with no event").isGreaterThan(drawn);
        }
        String last = text.toString().substring(text.toString().lastIndexOf('\r'));
        assertThat(last).contains("[###====").contains("read  25.0%, committed  12.5%, 60 records");
    }

    @Test
    void jsonCarriesBothSides() {
        StringWriter text = new StringWriter();
        try (RunProgress display = new RunProgress(new PrintWriter(text), RunProgress.Mode.json, "orders")) {
            display.onRead(50, 100, 40, 400);
        }
        assertThat(text.toString()).startsWith("{\"job\":\"orders\",\"read\":50,\"done\":0,\"total\":100,"
                + "\"readPercent\":50.0,\"percent\":0.0,\"records\":40,\"bytes\":400,");
    }

    @Test
    void nothingIsDrawnWithoutADisplay() {
        StringWriter text = new StringWriter();
        try (RunProgress display = new RunProgress(new PrintWriter(text), RunProgress.Mode.none, "orders")) {
            display.onRead(50, 100, 40, 400);
            display.onProgress(100, 100, 100, 1000);
        }
        assertThat(text.toString()).isEmpty();
    }

    private static int draws(StringWriter text) {
        return (int) text.toString().chars().filter(c -> c == '\r').count();
    }
}
