// Example Code Clash bot in Java: a random legal mover.
//
// Follows the bot guide to the letter: run as `java RandomBot
// /path/to/state.json` with game_dir as the working directory, writes
// move.json there, exits 0 on a move, 1 when state.json is malformed, 2 when
// it has no legal move. It keeps its turn count in the data file
// java-bot.json. The JDK's standard library only: the runtime image has no
// JSON library, so a small reader is below. The file's name is its public
// class's: RandomBot.java holds public class RandomBot.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public class RandomBot {
    static final int SIZE = 5;
    static final String DATA_FILE = "java-bot.json";

    /** Json reads the values of state.json: Map, List, String, Double, Boolean or null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            space();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                while (space() != '}') {
                    String key = string();
                    space();
                    expect(':');
                    m.put(key, value());
                    if (space() == ',') i++;
                }
                i++;
                return m;
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                while (space() != ']') {
                    l.add(value());
                    if (space() == ',') i++;
                }
                i++;
                return l;
            }
            if (c == '"') return string();
            for (String w : new String[] {"null", "true", "false"}) {
                if (s.startsWith(w, i)) {
                    i += w.length();
                    return w.equals("null") ? null : Boolean.valueOf(w.equals("true"));
                }
            }
            int start = i;
            while (i < s.length() && "+-.eE0123456789".indexOf(s.charAt(i)) >= 0) i++;
            return Double.valueOf(s.substring(start, i));
        }

        private char space() {
            while (Character.isWhitespace(s.charAt(i))) i++;
            return s.charAt(i);
        }

        private void expect(char c) {
            if (s.charAt(i++) != c) throw new IllegalArgumentException("expected " + c + " at " + (i - 1));
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') c = s.charAt(i++);
                b.append(c);
            }
            i++;
            return b.toString();
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) {
        return o instanceof Map ? (Map<String, Object>) o : Map.of();
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return o instanceof List ? (List<Object>) o : List.of();
    }

    static int num(Object o) {
        return o instanceof Double d ? d.intValue() : 0;
    }

    static boolean onBoard(int r, int c) {
        return r >= 0 && r < SIZE && c >= 0 && c < SIZE;
    }

    static boolean homeRow(String side, int r) {
        return side.equals("white") ? r <= 1 : r >= 3;
    }

    /** A move: from is null for a placement of setup steps 1-3. */
    record Move(int[] from, int[] to) {}

    static List<Move> setupMoves(Map<String, Object> state, String[][] color, String[][] type, String me) {
        int step = num(state.get("setupStep"));
        String rowsOf = step == 2 ? (me.equals("white") ? "black" : "white") : me;
        boolean[][] blocked = new boolean[SIZE][SIZE];
        for (Object t : list(state.get("blockedTiles"))) blocked[num(list(t).get(0))][num(list(t).get(1))] = true;
        List<int[]> kinds = new ArrayList<>();
        if (step == 4) {
            int bishops = 0, pawns = 0;
            for (int r = 0; r < SIZE; r++) {
                for (int c = 0; c < SIZE; c++) {
                    if (me.equals(color[r][c]) && "B".equals(type[r][c])) bishops++;
                    if (me.equals(color[r][c]) && "P".equals(type[r][c])) pawns++;
                }
            }
            if (bishops < 2) kinds.add(new int[] {0, 3});
            if (pawns < 3) kinds.add(new int[] {0, 4});
        } else if (step >= 1 && step <= 3) {
            kinds.add(null);
        }
        List<Move> out = new ArrayList<>();
        for (int[] kind : kinds) {
            for (int r = 0; r < SIZE; r++) {
                for (int c = 0; c < SIZE; c++) {
                    if (homeRow(rowsOf, r) && color[r][c] == null && !blocked[r][c]) out.add(new Move(kind, new int[] {r, c}));
                }
            }
        }
        return out;
    }

    static List<Move> playMoves(Map<String, Object> state, String[][] color, String[][] type, String me) {
        int[] shield = {-1, -1};
        for (Object a : list(state.get("abilitiesActivated"))) {
            List<Object> t = list(obj(a).get("target"));
            if ("shield".equals(obj(a).get("name")) && t.size() == 2) shield = new int[] {num(t.get(0)), num(t.get(1))};
        }
        int[][] dirs = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
        List<Move> out = new ArrayList<>();
        for (int r = 0; r < SIZE; r++) {
            for (int c = 0; c < SIZE; c++) {
                if (!me.equals(color[r][c])) continue;
                String t = type[r][c];
                if (t.equals("P")) {
                    int f = me.equals("white") ? 1 : -1;
                    if (onBoard(r + f, c) && color[r + f][c] == null) out.add(new Move(new int[] {r, c}, new int[] {r + f, c}));
                    for (int dc : new int[] {-1, 1}) {
                        int rr = r + f, cc = c + dc;
                        if (onBoard(rr, cc) && color[rr][cc] != null && !me.equals(color[rr][cc]) && !(rr == shield[0] && cc == shield[1])) {
                            out.add(new Move(new int[] {r, c}, new int[] {rr, cc}));
                        }
                    }
                    continue;
                }
                int from = t.equals("B") ? 4 : 0, to = t.equals("R") ? 4 : 8;
                for (int d = from; d < to; d++) {
                    for (int rr = r + dirs[d][0], cc = c + dirs[d][1]; onBoard(rr, cc); rr += dirs[d][0], cc += dirs[d][1]) {
                        if (!me.equals(color[rr][cc]) && !(rr == shield[0] && cc == shield[1])) out.add(new Move(new int[] {r, c}, new int[] {rr, cc}));
                        if (color[rr][cc] != null || t.equals("K")) break;
                    }
                }
            }
        }
        return out;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java RandomBot /path/to/state.json");
            System.exit(1);
        }
        String raw;
        Map<String, Object> state;
        String[][] color = new String[SIZE][SIZE], type = new String[SIZE][SIZE];
        try {
            raw = Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
            state = obj(new Json(raw).value());
            List<Object> rows = list(state.get("board"));
            if (rows.size() != SIZE || !(state.get("phase") instanceof String)) throw new IllegalArgumentException("no board or phase");
            for (int r = 0; r < SIZE; r++) {
                for (int c = 0; c < SIZE; c++) {
                    Map<String, Object> sq = obj(list(rows.get(r)).get(c));
                    if (!sq.isEmpty() && !"F".equals(sq.get("type"))) {
                        color[r][c] = (String) sq.get("color");
                        type[r][c] = (String) sq.get("type");
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("malformed state: " + e);
            System.exit(1);
            return;
        }
        long turns = 0;
        Path memory = Path.of(DATA_FILE);
        if (Files.exists(memory)) turns = num(obj(new Json(Files.readString(memory)).value()).get("turns"));
        Random rng = new Random(Arrays.hashCode(raw.getBytes(StandardCharsets.UTF_8)) * 31L + turns);
        String me = (String) state.get("playerColor");
        List<Move> moves = "setup".equals(state.get("phase")) ? setupMoves(state, color, type, me) : playMoves(state, color, type, me);
        if (moves.isEmpty()) {
            System.err.println("no legal move");
            System.exit(2);
        }
        Move m = moves.get(rng.nextInt(moves.size()));
        String from = m.from() == null ? "" : String.format("\"from\": [%d, %d], ", m.from()[0], m.from()[1]);
        Files.writeString(Path.of("move.json"),
                String.format("{\"move\": {%s\"to\": [%d, %d]}, \"ability\": {\"name\": null, \"target\": null}}%n", from, m.to()[0], m.to()[1]));
        Files.writeString(memory, String.format("{\"turns\": %d}%n", turns + 1));
    }
}
