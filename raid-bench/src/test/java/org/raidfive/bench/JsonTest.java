package org.raidfive.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void writesNestedValuesWithEscapes() {
        Map<String, Object> m = Json.object();
        m.put("name", "a\"b\\c\n");
        m.put("n", 42L);
        m.put("ok", true);
        m.put("none", null);
        m.put("list", List.of(1, "x"));
        m.put("empty", List.of());
        assertEquals(
                "{\n  \"name\": \"a\\\"b\\\\c\\n\",\n  \"n\": 42,\n  \"ok\": true,\n  \"none\": null,\n"
                        + "  \"list\": [\n    1,\n    \"x\"\n  ],\n  \"empty\": []\n}\n",
                Json.write(m));
    }
}
