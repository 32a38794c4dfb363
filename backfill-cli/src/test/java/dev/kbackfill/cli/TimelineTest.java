package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The chart is well-formed SVG whose bars stand where their offsets lie, each row scaled to its partition. */
class TimelineTest {

    private static Document parse(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Element> rects(Document d, int partition, String cls) {
        List<Element> found = new ArrayList<>();
        NodeList groups = d.getElementsByTagName("g");
        for (int i = 0; i < groups.getLength(); i++) {
            Element g = (Element) groups.item(i);
            if (!g.getAttribute("data-partition").equals(String.valueOf(partition))) {
                continue;
            }
            NodeList rs = g.getElementsByTagName("rect");
            for (int j = 0; j < rs.getLength(); j++) {
                Element r = (Element) rs.item(j);
                if (r.getAttribute("class").equals(cls)) {
                    found.add(r);
                }
            }
        }
        return found;
    }

    private static double x(Element e) {
        return Double.parseDouble(e.getAttribute("x"));
    }

    private static double w(Element e) {
        return Double.parseDouble(e.getAttribute("width"));
    }

    @Test
    void eachBarCoversItsOffsetsShareOfThePartitionsLog() throws Exception {
        Timeline t = new Timeline("plan of <orders> & more", "sub", List.of(
                new Timeline.Row(0, 0, 1000, List.of(new Timeline.Span(250, 750, Timeline.Kind.RANGE)), List.of(),
                        "[250, 750)"),
                new Timeline.Row(1, 4_000_000, 4_000_010, List.of(
                        new Timeline.Span(0, 4_000_000, Timeline.Kind.LOST),
                        new Timeline.Span(4_000_000, 4_000_005, Timeline.Kind.RANGE)), List.of(), "lost")));
        Document d = parse(t.svg());
        assertThat(d.getElementsByTagName("title").item(0).getTextContent()).isEqualTo("plan of <orders> & more");

        Element log0 = rects(d, 0, "log").get(0);
        Element range0 = rects(d, 0, "range").get(0);
        assertThat(rects(d, 0, "deleted")).as("nothing deleted: no break").isEmpty();
        assertThat(x(log0)).isEqualTo(Timeline.BAR_X);
        assertThat(w(log0)).isEqualTo(Timeline.BAR_W);
        assertThat(x(range0) - x(log0)).isCloseTo(Timeline.BAR_W * 0.25, within(0.1));
        assertThat(w(range0)).isCloseTo(Timeline.BAR_W * 0.5, within(0.1));

        // four million deleted offsets take the fixed break; the ten retained the rest, half of them the range
        Element deleted1 = rects(d, 1, "deleted").get(0);
        Element log1 = rects(d, 1, "log").get(0);
        Element range1 = rects(d, 1, "range").get(0);
        Element lost1 = rects(d, 1, "lost").get(0);
        assertThat(w(deleted1)).isEqualTo(Timeline.BREAK_W);
        assertThat(x(lost1)).isEqualTo(x(deleted1));
        assertThat(w(lost1)).isEqualTo(Timeline.BREAK_W);
        assertThat(x(range1)).isEqualTo(x(log1));
        assertThat(w(range1)).isCloseTo(w(log1) / 2, within(0.1));
        assertThat(t.svg()).contains("4,000,000").contains("4,000,010").contains("asked for but deleted by retention");
    }

    @Test
    void readersAreMarkedAndTheGapAndOverlapSitBetweenThem() throws Exception {
        Timeline t = new Timeline("handover", "sub", List.of(new Timeline.Row(0, 0, 100,
                List.of(new Timeline.Span(40, 60, Timeline.Kind.GAP)),
                List.of(new Timeline.Mark(40, "stopped"), new Timeline.Mark(60, "restarted")), "gap 20")));
        Document d = parse(t.svg());
        NodeList lines = d.getElementsByTagName("line");
        List<Double> marks = new ArrayList<>();
        for (int i = 0; i < lines.getLength(); i++) {
            Element l = (Element) lines.item(i);
            if (l.getAttribute("class").equals("mark")) {
                marks.add(Double.parseDouble(l.getAttribute("x1")));
            }
        }
        Element gap = rects(d, 0, "gap").get(0);
        assertThat(marks).containsExactly(x(gap), x(gap) + w(gap));
        assertThat(t.svg()).contains("the gap: read by neither reader").doesNotContain("the overlap");
    }

    @Test
    void anHtmlFileGetsThePictureInAPage(@TempDir Path dir) throws Exception {
        Timeline t = new Timeline("t", "s", List.of(new Timeline.Row(0, 0, 0, List.of(), List.of(), "empty")));
        t.write(dir.resolve("c.html"));
        t.write(dir.resolve("c.svg"));
        assertThat(Files.readString(dir.resolve("c.html"))).startsWith("<!DOCTYPE html>").contains("<svg ");
        assertThat(Files.readString(dir.resolve("c.svg"))).startsWith("<svg ");
        parse(Files.readString(dir.resolve("c.svg")));
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("c.svg")))).as("readable as a file written in place")
                .isEqualTo("rw-r--r--");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("c.html", "c.svg");
        }
    }
}
