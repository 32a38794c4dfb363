package dev.kbackfill.core.record;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.AbstractMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.kbackfill.resolver.RequestException;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.values.CelByteString;
import dev.cel.common.values.NullValue;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import dev.cel.runtime.CelVariableResolver;
import org.apache.kafka.common.header.Header;

/**
 * A record filter ({@code --where}) in Google's Common Expression Language over one record: {@code key} and
 * {@code value} (an object's fields as a map, nested objects and arrays as maps and lists; a key or value that is
 * not an object is its scalar; a tombstone's value is {@code null}), {@code headers} (a map of each header's last
 * value as text), {@code timestamp} (a CEL timestamp), {@code partition} and {@code offset}. For example
 * {@code value.status == 'packed' && partition == 0}, {@code has(value.tenant) && value.tenant == 'acme'},
 * {@code timestamp >= timestamp('2024-01-01T00:00:00Z')}.
 *
 * <p>Numbers compare across kinds ({@code value.amount > 10} for a decimal amount): whole numbers are CEL ints,
 * decimals and floating point doubles. Timestamps are CEL timestamps; dates, times and UUIDs text; bytes CEL bytes.
 * The expression must be boolean; it is compiled (and checked) once, and an expression that fails on a record (a
 * field that record lacks, a field of a tombstone's null value) makes it a poison record.
 */
public final class RecordFilter {

    private static final CelOptions OPTIONS = CelOptions.current().enableHeterogeneousNumericComparisons(true)
            .enableTimestampEpoch(true).build();
    private static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder().setOptions(OPTIONS)
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("key", SimpleType.DYN).addVar("value", SimpleType.DYN)
            .addVar("headers", MapType.create(SimpleType.STRING, SimpleType.STRING))
            .addVar("timestamp", SimpleType.TIMESTAMP).addVar("partition", SimpleType.INT)
            .addVar("offset", SimpleType.INT)
            .setResultType(SimpleType.BOOL).build();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().setOptions(OPTIONS).build();

    private final String expression;
    private final CelRuntime.Program program;

    private RecordFilter(String expression, CelRuntime.Program program) {
        this.expression = expression;
        this.program = program;
    }

    /**
     * The filter {@code expression} states.
     *
     * @throws RequestException naming the expression, where it is wrong and why (a bad input: exit 2)
     */
    public static RecordFilter compile(String expression) {
        CelAbstractSyntaxTree ast;
        try {
            ast = COMPILER.compile(expression).getAst();
        } catch (CelValidationException e) {
            CelIssue first = e.getErrors().get(0);
            throw new RequestException("invalid --where '" + expression + "': at column "
                    + (first.getSourceLocation().getColumn() + 1) + ": " + first.getMessage()
                    + " (a boolean CEL expression over key, value, headers, timestamp, partition and offset, e.g. "
                    + "value.status == 'packed' && partition == 0)");
        }
        try {
            return new RecordFilter(expression, RUNTIME.createProgram(ast));
        } catch (dev.cel.common.CelException e) {
            throw new RequestException("invalid --where '" + expression + "': " + e.getMessage());
        }
    }

    /** The expression as given. */
    public String expression() {
        return expression;
    }

    /**
     * Whether the record is kept.
     *
     * @param key    its decoded key columns
     * @param values its decoded value columns, null for a tombstone
     * @param single the column names of a key and a value that are not objects (their scalar is the variable)
     * @throws DecodeException when the expression cannot be evaluated on this record
     */
    public boolean keeps(SourceRecord record, Map<String, Object> key, Map<String, Object> values, String keyColumn,
                         String valueColumn) {
        // variables are made only when the expression asks for them, and fields only when it reads them
        CelVariableResolver vars = name -> switch (name) {
            case "key" -> Optional.of(side(key, keyColumn));
            case "value" -> Optional.of(values == null ? NullValue.NULL_VALUE : side(values, valueColumn));
            case "headers" -> Optional.of(headers(record));
            case "timestamp" -> Optional.of(Instant.ofEpochMilli(record.timestamp()));
            case "partition" -> Optional.of((long) record.partition());
            case "offset" -> Optional.of(record.offset());
            default -> Optional.empty();
        };
        Object result;
        try {
            result = program.eval(vars);
        } catch (CelEvaluationException | RuntimeException e) {
            throw new DecodeException(record, "--where cannot be evaluated on it: " + e.getMessage()
                    + (values == null ? " (a tombstone, whose value is null: 'value == null || ...' keeps deletes)"
                    : " ('has(value.f)' tells whether a field is there)"), e);
        }
        if (result instanceof Boolean b) {
            return b;
        }
        throw new DecodeException(record, "--where cannot be evaluated on it: it gives " + result + ", not true or false",
                null);
    }

    private static Map<String, String> headers(SourceRecord record) {
        Map<String, String> headers = new HashMap<>();
        if (record.headers() != null) {
            for (Header h : record.headers()) {
                headers.put(h.key(), h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8));
            }
        }
        return headers;
    }

    /** A key or value as the expression sees it: the scalar of a single non-object column, else a map. */
    private static Object side(Map<String, Object> columns, String single) {
        if (columns == null) {
            return NullValue.NULL_VALUE;
        }
        if (ScalarColumn.is(columns)) {
            return cel(columns.get(single));
        }
        return new CelView(columns);
    }

    /** A record's columns as CEL sees them, each converted when the expression reads it. */
    private static final class CelView extends AbstractMap<String, Object> {
        private final Map<String, Object> columns;

        CelView(Map<String, Object> columns) {
            this.columns = columns;
        }

        @Override
        public boolean containsKey(Object key) {
            return columns.containsKey(key);
        }

        @Override
        public Object get(Object key) {
            return columns.containsKey(key) ? cel(columns.get(key)) : null;
        }

        @Override
        public int size() {
            return columns.size();
        }

        @Override
        public Set<Entry<String, Object>> entrySet() {
            Map<String, Object> all = new LinkedHashMap<>(columns.size() * 2);
            columns.forEach((k, v) -> all.put(k, cel(v)));
            return all.entrySet();
        }
    }

    /** A decoded value as a CEL value. */
    static Object cel(Object v) {
        if (v == null) {
            return NullValue.NULL_VALUE;
        }
        if (v instanceof String || v instanceof Long || v instanceof Double || v instanceof Boolean
                || v instanceof Instant) {
            return v;
        }
        if (v instanceof Integer i) {
            return i.longValue();
        }
        if (v instanceof BigDecimal d) {
            return d.doubleValue();
        }
        if (v instanceof byte[] b) {
            return CelByteString.of(b);
        }
        if (v instanceof JsonText j) {
            try (JsonParser p = RecordDecoder.JSON.createParser(j.json())) {
                return json(p, p.nextToken());
            } catch (IOException e) {
                throw new IllegalStateException("not JSON: " + j.json(), e);
            }
        }
        return v.toString(); // dates, times, UUIDs
    }

    private static Object json(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    m.put(name, json(p, p.nextToken()));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                JsonToken e;
                while ((e = p.nextToken()) != JsonToken.END_ARRAY) {
                    l.add(json(p, e));
                }
                return l;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT -> {
                return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? p.getDecimalValue().doubleValue()
                        : (Object) p.getLongValue();
            }
            case VALUE_NUMBER_FLOAT -> {
                return p.getDecimalValue().doubleValue();
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            default -> {
                return NullValue.NULL_VALUE;
            }
        }
    }
}
