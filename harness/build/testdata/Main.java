// A tiles bot that only walks up and down its column: always a valid line.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Main {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        int row = 0, lines = 0, sizeSeen = 0;
        while ((line = in.readLine()) != null) {
            lines++;
            if (line.startsWith("SIZE ")) { sizeSeen = lines; continue; }
            if (sizeSeen > 0 && lines == sizeSeen + 1) { row = Integer.parseInt(line.trim().split("\\s+")[0]); continue; }
            if (line.equals("TURN")) {
                if (row > 1) { System.out.println("MOVE U"); row--; } else { System.out.println("MOVE D"); row++; }
                System.out.flush();
            }
            if (line.equals("GAMEOVER")) return;
        }
    }
}
