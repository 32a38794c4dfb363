package dev.kbackfill.core.record;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumOptions;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.squareup.wire.schema.Field;
import com.squareup.wire.schema.Location;
import com.squareup.wire.schema.internal.parser.EnumConstantElement;
import com.squareup.wire.schema.internal.parser.EnumElement;
import com.squareup.wire.schema.internal.parser.FieldElement;
import com.squareup.wire.schema.internal.parser.MessageElement;
import com.squareup.wire.schema.internal.parser.OneOfElement;
import com.squareup.wire.schema.internal.parser.OptionElement;
import com.squareup.wire.schema.internal.parser.ProtoFileElement;
import com.squareup.wire.schema.internal.parser.ProtoParser;
import com.squareup.wire.schema.internal.parser.TypeElement;

/**
 * {@code .proto} source, as a schema registry holds it, turned into protobuf-java descriptors: parsed by Square's
 * wire-schema (the parser Confluent's own client uses), converted to a {@link FileDescriptorProto} and built by
 * protobuf-java, which resolves type names by the language's scoping rules.
 *
 * <p>Imports resolve, in order, to the schema's registry references (by import path), to the well-known types
 * protobuf-java carries ({@code google/protobuf/*.proto}), and to the small types Confluent's converters use
 * ({@code confluent/type/decimal.proto}, {@code google/type/date.proto}, {@code google/type/timeofday.proto},
 * {@code confluent/meta.proto}). Options are not carried: they do not change how a message is read.
 */
final class ProtoFiles {

    private static final Pattern MAP = Pattern.compile("map\\s*<\\s*([^,\\s]+)\\s*,\\s*([^>\\s]+)\\s*>");

    private static final Map<String, FieldDescriptorProto.Type> SCALARS = new HashMap<>();

    static {
        for (FieldDescriptorProto.Type t : FieldDescriptorProto.Type.values()) {
            if (t != FieldDescriptorProto.Type.TYPE_MESSAGE && t != FieldDescriptorProto.Type.TYPE_ENUM
                    && t != FieldDescriptorProto.Type.TYPE_GROUP) {
                SCALARS.put(t.name().substring(5).toLowerCase(Locale.ROOT), t);
            }
        }
    }

    /** The well-known types protobuf-java carries, by import path. */
    private static final Map<String, FileDescriptor> WELL_KNOWN = Map.of(
            "google/protobuf/timestamp.proto", com.google.protobuf.TimestampProto.getDescriptor(),
            "google/protobuf/wrappers.proto", com.google.protobuf.WrappersProto.getDescriptor(),
            "google/protobuf/duration.proto", com.google.protobuf.DurationProto.getDescriptor(),
            "google/protobuf/struct.proto", com.google.protobuf.StructProto.getDescriptor(),
            "google/protobuf/any.proto", com.google.protobuf.AnyProto.getDescriptor(),
            "google/protobuf/empty.proto", com.google.protobuf.EmptyProto.getDescriptor(),
            "google/protobuf/field_mask.proto", com.google.protobuf.FieldMaskProto.getDescriptor(),
            "google/protobuf/descriptor.proto", com.google.protobuf.DescriptorProtos.getDescriptor());

    /** Types Confluent's converters write and its client resolves without references, by import path. */
    private static final Map<String, String> CONFLUENT = Map.of(
            "confluent/type/decimal.proto", """
                    syntax = "proto3";
                    package confluent.type;
                    message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }""",
            "google/type/date.proto", """
                    syntax = "proto3";
                    package google.type;
                    message Date { int32 year = 1; int32 month = 2; int32 day = 3; }""",
            "google/type/timeofday.proto", """
                    syntax = "proto3";
                    package google.type;
                    message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }""",
            "confluent/meta.proto", """
                    syntax = "proto3";
                    package confluent;
                    message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3; }""");

    private ProtoFiles() {
    }

    /**
     * The file described by {@code text}, its imports resolved through {@code references} (import path → source).
     *
     * @param name the file's name, for messages and as its descriptor's name
     * @throws IllegalArgumentException naming what is wrong: the source does not parse, an import cannot be
     *                                  resolved, a type is unknown, or the file uses what kbackfill cannot read
     */
    static FileDescriptor build(String name, String text, Map<String, String> references) {
        return build(name, text, references, new HashMap<>(), new ArrayList<>());
    }

    private static FileDescriptor build(String name, String text, Map<String, String> references,
                                        Map<String, FileDescriptor> built, List<String> path) {
        if (path.contains(name)) {
            throw new IllegalArgumentException("imports form a cycle: " + String.join(" -> ", path) + " -> " + name);
        }
        path.add(name);
        ProtoFileElement file;
        try {
            file = ProtoParser.Companion.parse(Location.get(name), text);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(name + " is not valid .proto source: " + e.getMessage(), e);
        }
        List<String> imports = new ArrayList<>(file.getImports());
        imports.addAll(file.getPublicImports());
        imports.addAll(file.getWeakImports());
        FileDescriptor[] dependencies = new FileDescriptor[imports.size()];
        for (int i = 0; i < imports.size(); i++) {
            String imported = imports.get(i);
            FileDescriptor d = built.get(imported);
            if (d == null) {
                if (references.containsKey(imported)) {
                    d = build(imported, references.get(imported), references, built, path);
                } else if (WELL_KNOWN.containsKey(imported)) {
                    d = WELL_KNOWN.get(imported);
                } else if (CONFLUENT.containsKey(imported)) {
                    d = build(imported, CONFLUENT.get(imported), Map.of(), built, path);
                } else {
                    throw new IllegalArgumentException(name + " imports \"" + imported + "\", which is neither among "
                            + "the schema's references in the registry nor a well-known type");
                }
                built.put(imported, d);
            }
            dependencies[i] = d;
        }
        FileDescriptorProto.Builder proto = FileDescriptorProto.newBuilder().setName(name)
                .setSyntax(file.getSyntax() == null ? "proto2" : file.getSyntax().toString());
        if (file.getPackageName() != null) {
            proto.setPackage(file.getPackageName());
        }
        proto.addAllDependency(imports);
        for (int i = file.getImports().size(); i < file.getImports().size() + file.getPublicImports().size(); i++) {
            proto.addPublicDependency(i);
        }
        boolean proto3 = "proto3".equals(proto.getSyntax());
        for (TypeElement type : file.getTypes()) {
            if (type instanceof MessageElement m) {
                proto.addMessageType(message(m, proto3));
            } else if (type instanceof EnumElement e) {
                proto.addEnumType(enumeration(e));
            }
        }
        try {
            FileDescriptor descriptor = FileDescriptor.buildFrom(proto.build(), dependencies);
            path.remove(path.size() - 1);
            return descriptor;
        } catch (DescriptorValidationException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static DescriptorProto message(MessageElement m, boolean proto3) {
        if (!m.getGroups().isEmpty()) {
            throw new IllegalArgumentException("message " + m.getName() + " has a group (proto2 groups are not read)");
        }
        DescriptorProto.Builder d = DescriptorProto.newBuilder().setName(m.getName());
        for (TypeElement nested : m.getNestedTypes()) {
            if (nested instanceof MessageElement n) {
                d.addNestedType(message(n, proto3));
            } else if (nested instanceof EnumElement e) {
                d.addEnumType(enumeration(e));
            }
        }
        // fields in the order they are declared, oneof members among them, as protoc orders them
        record Declared(FieldElement field, int oneof) {
        }
        List<Declared> fields = new ArrayList<>();
        m.getFields().forEach(f -> fields.add(new Declared(f, -1)));
        for (int i = 0; i < m.getOneOfs().size(); i++) {
            OneOfElement o = m.getOneOfs().get(i);
            d.addOneofDecl(OneofDescriptorProto.newBuilder().setName(o.getName()));
            int index = i;
            o.getFields().forEach(f -> fields.add(new Declared(f, index)));
        }
        fields.sort(Comparator.comparingInt((Declared f) -> f.field().getLocation().getLine())
                .thenComparingInt(f -> f.field().getLocation().getColumn()));
        List<String> synthetic = new ArrayList<>();
        for (Declared declared : fields) {
            FieldElement f = declared.field();
            FieldDescriptorProto.Builder field = FieldDescriptorProto.newBuilder().setName(f.getName())
                    .setNumber(f.getTag());
            Matcher map = MAP.matcher(f.getType());
            if (map.matches()) {
                String entry = camel(f.getName()) + "Entry";
                d.addNestedType(DescriptorProto.newBuilder().setName(entry)
                        .setOptions(MessageOptions.newBuilder().setMapEntry(true))
                        .addField(typed(FieldDescriptorProto.newBuilder().setName("key").setNumber(1)
                                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL), map.group(1)))
                        .addField(typed(FieldDescriptorProto.newBuilder().setName("value").setNumber(2)
                                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL), map.group(2))));
                field.setLabel(FieldDescriptorProto.Label.LABEL_REPEATED).setTypeName(entry);
            } else {
                typed(field, f.getType());
                Field.Label label = f.getLabel();
                field.setLabel(label == Field.Label.REPEATED ? FieldDescriptorProto.Label.LABEL_REPEATED
                        : label == Field.Label.REQUIRED ? FieldDescriptorProto.Label.LABEL_REQUIRED
                        : FieldDescriptorProto.Label.LABEL_OPTIONAL);
                if (f.getDefaultValue() != null) {
                    field.setDefaultValue(f.getDefaultValue());
                }
                if (declared.oneof() >= 0) {
                    field.setOneofIndex(declared.oneof());
                } else if (proto3 && label == Field.Label.OPTIONAL) {
                    // proto3 'optional': presence through a synthetic oneof, declared after the real ones
                    field.setProto3Optional(true).setOneofIndex(m.getOneOfs().size() + synthetic.size());
                    synthetic.add("_" + f.getName());
                }
            }
            d.addField(field);
        }
        synthetic.forEach(name -> d.addOneofDecl(OneofDescriptorProto.newBuilder().setName(name)));
        return d.build();
    }

    /** A scalar type, or a message or enum type by name (resolved by protobuf-java, relative names included). */
    private static FieldDescriptorProto.Builder typed(FieldDescriptorProto.Builder field, String type) {
        FieldDescriptorProto.Type scalar = SCALARS.get(type);
        return scalar != null ? field.setType(scalar) : field.setTypeName(type);
    }

    private static EnumDescriptorProto enumeration(EnumElement e) {
        EnumDescriptorProto.Builder d = EnumDescriptorProto.newBuilder().setName(e.getName());
        for (EnumConstantElement c : e.getConstants()) {
            d.addValue(EnumValueDescriptorProto.newBuilder().setName(c.getName()).setNumber(c.getTag()));
        }
        for (OptionElement o : e.getOptions()) {
            if (o.getName().equals("allow_alias") && "true".equals(String.valueOf(o.getValue()))) {
                d.setOptions(EnumOptions.newBuilder().setAllowAlias(true));
            }
        }
        return d.build();
    }

    /** protoc's name for a map field's entry message: {@code line_items} → {@code LineItems}. */
    private static String camel(String name) {
        StringBuilder out = new StringBuilder();
        boolean upper = true;
        for (char c : name.toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }
}
