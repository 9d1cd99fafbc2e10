/* A tiles bot that only walks up and down its column: always a valid line. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    int n = 0, row = 0, lines = 0, size_seen = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        lines++;
        if (strncmp(line, "SIZE ", 5) == 0) { sscanf(line + 5, "%d", &n); size_seen = lines; continue; }
        if (size_seen && lines == size_seen + 1) { sscanf(line, "%d", &row); continue; }
        if (strncmp(line, "TURN", 4) == 0 && line[4] != 'O') {
            if (row > 1) { printf("MOVE U\n"); row--; } else { printf("MOVE D\n"); row++; }
            fflush(stdout);
        }
        if (strncmp(line, "GAMEOVER", 8) == 0) return 0;
    }
    return 0;
}
