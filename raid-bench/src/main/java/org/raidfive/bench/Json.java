package org.raidfive.bench;

/** A minimal JSON writer (objects, arrays, strings, numbers, booleans), enough for the reports. */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean needComma;

    Json beginObject() {
        comma();
        sb.append('{');
        needComma = false;
        return this;
    }

    Json endObject() {
        sb.append('}');
        needComma = true;
        return this;
    }

    Json beginArray() {
        comma();
        sb.append('[');
        needComma = false;
        return this;
    }

    Json endArray() {
        sb.append(']');
        needComma = true;
        return this;
    }

    Json name(String name) {
        comma();
        string(name);
        sb.append(':');
        needComma = false;
        return this;
    }

    Json value(String s) {
        comma();
        if (s == null) {
            sb.append("null");
        } else {
            string(s);
        }
        needComma = true;
        return this;
    }

    Json value(double d) {
        comma();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            sb.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            sb.append((long) d);
        } else {
            sb.append(new java.math.BigDecimal(d).round(new java.math.MathContext(6)).stripTrailingZeros().toString());
        }
        needComma = true;
        return this;
    }

    Json value(long v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    Json value(boolean v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    Json field(String name, String v) {
        return name(name).value(v);
    }

    Json field(String name, double v) {
        return name(name).value(v);
    }

    Json field(String name, long v) {
        return name(name).value(v);
    }

    Json field(String name, boolean v) {
        return name(name).value(v);
    }

    private void comma() {
        if (needComma) {
            sb.append(',');
            needComma = false;
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
