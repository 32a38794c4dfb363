package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import org.junit.jupiter.api.Test;

/**
 * No method of the product's code (every module's {@code src/main}) is longer than 80 lines: a method that does
 * several jobs is split along its steps, each named. Parsed with the JDK's own compiler, lambdas and anonymous
 * classes counted within the method that holds them.
 */
class MethodLengthTest {

    private static final int MOST_LINES = 80;

    @Test
    void noMethodOfTheProductsCodeIsLongerThan80Lines() throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<Path> sources;
        try (Stream<Path> files = Files.walk(root)) {
            sources = files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")
                    && !p.toString().contains("/target/") && !p.toString().contains("/.git/")).toList();
        }
        assertThat(sources).hasSizeGreaterThan(100);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        List<String> tooLong = new ArrayList<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, null)) {
            JavacTask task = (JavacTask) compiler.getTask(null, files, d -> { }, List.of("-proc:none"), null,
                    files.getJavaFileObjectsFromPaths(sources));
            SourcePositions positions = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                LineMap lines = unit.getLineMap();
                new TreePathScanner<Void, Void>() {
                    @Override
                    public Void visitMethod(MethodTree method, Void v) {
                        if (method.getBody() != null) {
                            long first = lines.getLineNumber(positions.getStartPosition(unit, method));
                            long last = lines.getLineNumber(positions.getEndPosition(unit, method));
                            if (last - first + 1 > MOST_LINES) {
                                tooLong.add(root.relativize(Path.of(unit.getSourceFile().toUri())) + ":" + first + " "
                                        + method.getName() + " (" + (last - first + 1) + " lines)");
                            }
                        }
                        return super.visitMethod(method, v);
                    }
                }.scan(unit, null);
            }
        }
        assertThat(tooLong).as("methods longer than " + MOST_LINES + " lines").isEmpty();
    }
}
