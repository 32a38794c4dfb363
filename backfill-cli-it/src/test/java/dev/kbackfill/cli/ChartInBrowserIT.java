package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kbackfill.embedded.EmbeddedKafka;
import dev.kbackfill.embedded.SharedKafka;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code plan --chart} and {@code inspect --chart} drawn by a real browser (Debian's Chromium, headless): the
 * screenshot's bars have the colours the legend names, where the offsets lie, at the widths they should have.
 */
@Tag("kafka")
class ChartInBrowserIT {

    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
    private static final String TOPIC = "chart-orders";
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void topic() throws Exception {
        kafka = SharedKafka.get();
        kafka.createTopic(TOPIC, 2, Map.of());
        for (int p = 0; p < 2; p++) {
            Instant[] times = new Instant[8];
            for (int i = 0; i < times.length; i++) {
                times[i] = T0.plusSeconds(60L * i);
            }
            TestTopics.produce(kafka, TOPIC, p, times);
        }
        try (var admin = kafka.admin()) {
            admin.deleteRecords(Map.of(new TopicPartition(TOPIC, 0), RecordsToDelete.beforeOffset(4))).all().get();
        }
    }

    @Test
    void aPlansRangeAndWhatRetentionTookAreDrawnWhereTheirOffsetsLie(@TempDir Path dir) throws Exception {
        Path chart = dir.resolve("plan.svg");
        CliRun run = CliRun.of("plan", "--bootstrap-server", kafka.bootstrapServers(), "--topic", TOPIC,
                "--from", "offset:0", "--to", "latest", "--allow-data-loss", "--chart", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).contains("chart drawn in " + chart);
        BufferedImage shot = screenshot(chart, dir, 2);

        // partition 0: offsets 0-3 deleted (asked for: red, in the break), the range [4, 8) over the whole log
        List<int[]> p0 = runs(shot, barMiddle(0));
        assertThat(runOf(p0, Timeline.Kind.LOST.colour)).as("lost").isCloseTo(Timeline.BREAK_W, within());
        assertThat(startOf(p0, Timeline.Kind.LOST.colour)).isCloseTo(Timeline.BAR_X, within());
        int logWidth = Timeline.BAR_X + Timeline.BAR_W - (Timeline.BAR_X + Timeline.BREAK_W + 4);
        assertThat(runOf(p0, Timeline.Kind.RANGE.colour)).as("range of 0").isCloseTo(logWidth, within());
        // partition 1: nothing deleted, no break: the range [0, 8) is the whole bar
        List<int[]> p1 = runs(shot, barMiddle(1));
        assertThat(runOf(p1, Timeline.Kind.LOST.colour)).isZero();
        assertThat(runOf(p1, Timeline.Kind.RANGE.colour)).as("range of 1").isCloseTo(Timeline.BAR_W, within());
        assertThat(startOf(p1, Timeline.Kind.RANGE.colour)).isCloseTo(Timeline.BAR_X, within());
    }

    @Test
    void theGapAndTheOverlapBetweenTwoReadersAreDrawnBetweenTheirMarksInAnHtmlPage(@TempDir Path dir)
            throws Exception {
        try (var admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets("chart-old", Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(5),
                    new TopicPartition(TOPIC, 1), new OffsetAndMetadata(6))).all().get();
            admin.alterConsumerGroupOffsets("chart-new", Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(7),
                    new TopicPartition(TOPIC, 1), new OffsetAndMetadata(2))).all().get();
        }
        Path chart = dir.resolve("handover.html");
        CliRun run = CliRun.of("inspect", "--bootstrap-server", kafka.bootstrapServers(), "group:chart-old",
                "group:chart-new", "--chart", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Files.readString(chart)).startsWith("<!DOCTYPE html>");
        BufferedImage shot = screenshot(chart, dir, 2);

        // partition 0, log [4, 8) after the break: stopped at 5, restarted at 7, the gap [5, 7) is half the log
        int x0 = Timeline.BAR_X + Timeline.BREAK_W + 4;
        double perOffset0 = (Timeline.BAR_X + Timeline.BAR_W - x0) / 4.0;
        List<int[]> p0 = runs(shot, barMiddle(0));
        assertThat(runOf(p0, Timeline.Kind.GAP.colour)).as("gap").isCloseTo((int) Math.round(2 * perOffset0), within());
        assertThat(startOf(p0, Timeline.Kind.GAP.colour)).isCloseTo((int) Math.round(x0 + perOffset0), within());
        assertThat(runOf(p0, Timeline.Kind.OVERLAP.colour)).isZero();
        // partition 1, log [0, 8): stopped at 6, restarted at 2, the overlap [2, 6) is half the bar
        double perOffset1 = Timeline.BAR_W / 8.0;
        List<int[]> p1 = runs(shot, barMiddle(1));
        assertThat(runOf(p1, Timeline.Kind.OVERLAP.colour)).as("overlap")
                .isCloseTo((int) Math.round(4 * perOffset1), within());
        assertThat(startOf(p1, Timeline.Kind.OVERLAP.colour))
                .isCloseTo((int) Math.round(Timeline.BAR_X + 2 * perOffset1), within());
        // each reader's mark is a dark line across the bar
        int dark = 0;
        for (int x = Timeline.BAR_X; x < Timeline.BAR_X + Timeline.BAR_W; x++) {
            if (close(shot.getRGB(x, barMiddle(1) - Timeline.BAR_H / 2 - 2), "#1a202c")) {
                dark++;
            }
        }
        assertThat(dark).as("two marks, about 2 px each").isBetween(2, 8);
    }

    private static org.assertj.core.data.Offset<Integer> within() {
        return org.assertj.core.data.Offset.offset(3);
    }

    /** The y of the middle of a partition's bar. */
    private static int barMiddle(int row) {
        return Timeline.TOP + row * Timeline.ROW_H + 14 + Timeline.BAR_H / 2;
    }

    /** Runs of one colour along a line of pixels: [start x, length, rgb]. */
    private static List<int[]> runs(BufferedImage image, int y) {
        List<int[]> runs = new ArrayList<>();
        int x = 0;
        while (x < image.getWidth()) {
            int rgb = image.getRGB(x, y) & 0xffffff;
            int start = x;
            while (x < image.getWidth() && (image.getRGB(x, y) & 0xffffff) == rgb) {
                x++;
            }
            runs.add(new int[] {start, x - start, rgb});
        }
        return runs;
    }

    private static int runOf(List<int[]> runs, String colour) {
        return runs.stream().filter(r -> close(r[2], colour)).mapToInt(r -> r[1]).sum();
    }

    private static int startOf(List<int[]> runs, String colour) {
        return runs.stream().filter(r -> close(r[2], colour)).mapToInt(r -> r[0]).min().orElse(-1);
    }

    private static boolean close(int rgb, String colour) {
        int want = Integer.parseInt(colour.substring(1), 16);
        for (int shift = 0; shift <= 16; shift += 8) {
            if (Math.abs(((rgb >> shift) & 0xff) - ((want >> shift) & 0xff)) > 6) {
                return false;
            }
        }
        return true;
    }

    /** The chart as Chromium draws it, at one device pixel per SVG unit. */
    private static BufferedImage screenshot(Path chart, Path dir, int rows) throws Exception {
        Path png = dir.resolve(chart.getFileName() + ".png");
        int height = Timeline.TOP + rows * Timeline.ROW_H + 20;
        Process p = new ProcessBuilder(chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--force-device-scale-factor=1", "--user-data-dir=" + dir.resolve("profile"),
                "--window-size=" + Timeline.WIDTH + "," + height, "--screenshot=" + png,
                chart.toUri().toString()).redirectErrorStream(true).redirectOutput(dir.resolve("chromium.log").toFile())
                .start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        assertThat(png).as(Files.readString(dir.resolve("chromium.log"))).exists();
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(Timeline.WIDTH);
        return image;
    }

    private static String chromium() {
        for (String candidate : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        throw new AssertionError("no Chromium: install Debian's chromium package (bash .ci/run does)");
    }
}
