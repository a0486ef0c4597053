package org.popshim.interop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.filter.ExpressionType;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.filter.FilterFactory;
import org.apache.rocketmq.filter.expression.EvaluationContext;
import org.apache.rocketmq.filter.expression.Expression;
import org.junit.jupiter.api.Test;

/**
 * Scenario 11, the grammar half: the SQL92 cases of testdata/filter/sql92_cases.txt go through RocketMQ's own
 * selector (FilterFactory's SQL92 filter, rocketmq-filter 5.5.0), with the message properties decoded by
 * MessageDecoder.string2messageProperties as the broker does. Every case must compile (or fail to) and
 * evaluate to what the file says. popshim's broker/filter runs the same file (cases_test.go), so the two
 * implementations agree on every case. No popshim process is involved.
 */
class S11SqlGrammarTest {

    @Test
    void rocketmqSelectorGivesTheResultsOfTheCasesFile() throws Exception {
        Path file = Path.of(System.getProperty("basedir", ".")).resolve("../../filter/sql92_cases.txt").normalize();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> failures = new ArrayList<>();
        int cases = 0;
        int evals = 0;
        String sql = null;
        Expression expr = null;
        Exception compileError = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int n = i + 1;
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            if (line.startsWith("sql ")) {
                sql = unescapeSql(line.substring(4));
                cases++;
                try {
                    expr = FilterFactory.INSTANCE.get(ExpressionType.SQL92).compile(sql);
                    compileError = null;
                } catch (Exception e) {
                    expr = null;
                    compileError = e;
                }
                continue;
            }
            if (line.equals("error")) {
                if (expr != null) {
                    failures.add("line " + n + ": " + quote(sql) + " compiled to " + expr + ", want an error");
                }
                continue;
            }
            String[] f = line.trim().split("[ \t]+");
            String want = f[f.length - 1];
            if (expr == null) {
                failures.add("line " + n + ": " + quote(sql) + " did not compile: " + compileError);
                continue;
            }
            StringBuilder props = new StringBuilder();
            if (!(f.length == 3 && f[0].equals("-"))) {
                for (int j = 0; j < f.length - 2; j++) {
                    int eq = f[j].indexOf('=');
                    props.append(f[j], 0, eq).append('\u0001').append(unescapeValue(f[j].substring(eq + 1))).append('\u0002');
                }
            }
            Map<String, String> map = MessageDecoder.string2messageProperties(props.toString());
            String got;
            try {
                Object r = expr.evaluate(new Props(map));
                got = r == null ? "NULL" : Boolean.TRUE.equals(r) ? "TRUE" : Boolean.FALSE.equals(r) ? "FALSE" : "OTHER:" + r;
            } catch (Throwable t) {
                got = "THROW";
            }
            evals++;
            if (!got.equals(want)) {
                failures.add("line " + n + ": " + quote(sql) + " (" + expr + ") with " + map + ": RocketMQ gives " + got + ", the file says " + want);
            }
        }
        System.out.println("S11SqlGrammarTest: " + cases + " cases, " + evals + " evaluations, " + failures.size() + " disagreements");
        assertTrue(cases >= 200, "only " + cases + " cases read from " + file);
        assertTrue(failures.isEmpty(), failures.size() + " disagreements:\n" + String.join("\n", failures));
    }

    /** The message properties as an EvaluationContext (the broker's MessageEvaluationContext does the same). */
    private record Props(Map<String, String> map) implements EvaluationContext {
        @Override
        public Object get(String name) {
            return map.get(name);
        }

        @Override
        public Map<String, Object> keyValues() {
            return new HashMap<>(map);
        }
    }

    private static String unescapeSql(String s) {
        return unescape(s, 'n', "\n", 'r', "\r", 't', "\t", 'f', "\f");
    }

    private static String unescapeValue(String s) {
        return unescape(s, 's', " ", 't', "\t", 'n', "\n", '\\', "\\");
    }

    /** Replaces backslash escapes: pairs of (escape letter, replacement); "\\\\" is always a backslash. */
    private static String unescape(String s, Object... pairs) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char e = s.charAt(i + 1);
                String rep = e == '\\' ? "\\" : null;
                for (int k = 0; k < pairs.length && rep == null; k += 2) {
                    if ((char) pairs[k] == e) {
                        rep = (String) pairs[k + 1];
                    }
                }
                if (rep != null) {
                    b.append(rep);
                    i++;
                    continue;
                }
            }
            b.append(c);
        }
        return b.toString();
    }

    private static String quote(String s) {
        return "\"" + s.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r").replace("\f", "\\f") + "\"";
    }
}
