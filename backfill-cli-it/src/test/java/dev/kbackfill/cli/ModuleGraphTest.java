package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * docs/architecture.md's table of module dependencies is the build's: each module's kbackfill dependencies at
 * compile, runtime and provided scope, as its {@code pom.xml} declares them, and no product module beyond the table's.
 */
class ModuleGraphTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z-]+)` \\|([^|]*)\\|([^|]*)\\|\\s*$");

    @Test
    void theDocumentedModuleGraphIsTheBuilds() throws Exception {
        Map<String, String> documented = new TreeMap<>();
        for (String line : Files.readAllLines(ROOT.resolve("docs/architecture.md"))) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                String[] added = m.group(3).split("provided:", 2); // at runtime, then at provided scope
                documented.put(m.group(1), "compile " + names(m.group(2)) + " runtime " + names(added[0])
                        + " provided " + names(added.length > 1 ? added[1] : ""));
            }
        }
        assertThat(documented).as("the table in docs/architecture.md").containsKeys("backfill-core", "engine-spark");

        Map<String, String> built = new TreeMap<>();
        List<Path> poms;
        try (Stream<Path> files = Files.walk(ROOT, 3)) {
            poms = files.filter(p -> p.getFileName().toString().equals("pom.xml") && !p.toString().contains("/target/")
                    && !p.getParent().equals(ROOT)).toList();
        }
        for (Path pom : poms) {
            Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
                    .getDocumentElement();
            String module = pom.getParent().getFileName().toString();
            if (!documented.containsKey(module)) {
                continue; // test-only modules and aggregators: listed in the prose, not the table
            }
            List<String> compile = new ArrayList<>();
            List<String> runtime = new ArrayList<>();
            List<String> provided = new ArrayList<>();
            Element dependencies = child(project, "dependencies");
            NodeList list = dependencies == null ? null : dependencies.getElementsByTagName("dependency");
            for (int i = 0; list != null && i < list.getLength(); i++) {
                Element d = (Element) list.item(i);
                if (!text(d, "groupId").equals("dev.kbackfill") || !text(d, "type").isEmpty()) {
                    continue;
                }
                String scope = text(d, "scope");
                if (scope.isEmpty() || scope.equals("compile")) {
                    compile.add(text(d, "artifactId"));
                } else if (scope.equals("runtime")) {
                    runtime.add(text(d, "artifactId"));
                } else if (scope.equals("provided")) {
                    provided.add(text(d, "artifactId"));
                }
            }
            built.put(module, "compile " + compile + " runtime " + runtime + " provided " + provided);
        }
        assertThat(built).as("the poms of the modules docs/architecture.md's table lists").isEqualTo(documented);
    }

    private static List<String> names(String cell) {
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile("`([a-z-]+)`").matcher(cell);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? "" : e.getTextContent().trim();
    }
}
