package org.raidfive.bench;

import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Just enough JSON for every {@code --json} output and benchmark report: maps (in insertion order),
 * lists, strings, numbers, booleans and null, pretty-printed with two-space indents or on one line.
 */
public final class Json {
    private Json() {}

    /** An ordered object to fill with {@code put}. */
    public static Map<String, Object> object() {
        return new LinkedHashMap<>();
    }

    /** Pretty-printed, with a final newline. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder(256);
        write(out, value, 0);
        return out.append('\n').toString();
    }

    /** One line (JSON Lines), for a stream of records such as raid monitor's events. */
    public static String line(Object value) {
        StringBuilder out = new StringBuilder(128);
        write(out, value, -1);
        return out.append('\n').toString();
    }

    /** {@code indent} -1: everything on one line. */
    private static void write(StringBuilder out, Object value, int indent) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Double d) {
            out.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.3f", d));
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                out.append("{}");
                return;
            }
            boolean flat = indent < 0;
            out.append(flat ? "{" : "{\n");
            Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                pad(out, flat ? -1 : indent + 1);
                string(out, String.valueOf(e.getKey()));
                out.append(flat ? ":" : ": ");
                write(out, e.getValue(), flat ? -1 : indent + 1);
                out.append(it.hasNext() ? (flat ? "," : ",\n") : (flat ? "" : "\n"));
            }
            pad(out, indent);
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            if (list.isEmpty()) {
                out.append("[]");
                return;
            }
            boolean flat = indent < 0;
            out.append(flat ? "[" : "[\n");
            Iterator<?> it = list.iterator();
            while (it.hasNext()) {
                pad(out, flat ? -1 : indent + 1);
                write(out, it.next(), flat ? -1 : indent + 1);
                out.append(it.hasNext() ? (flat ? "," : ",\n") : (flat ? "" : "\n"));
            }
            pad(out, indent);
            out.append(']');
        } else {
            string(out, value.toString());
        }
    }

    private static void pad(StringBuilder out, int indent) {
        if (indent > 0) {
            out.append("  ".repeat(indent));
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
