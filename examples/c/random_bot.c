/*
 * Example Code Clash bot in C: a random legal mover.
 *
 * Follows the bot guide to the letter: run as `bot /path/to/state.json` with
 * game_dir as the working directory, writes move.json there, exits 0 on a
 * move, 1 when state.json is malformed, 2 when it has no legal move. It keeps
 * its turn count in the data file c-bot.json. The C standard library only:
 * the runtime image has no JSON library, so a small parser is below.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE 5
#define DATA_FILE "c-bot.json"

/* ---- a small JSON reader: enough for state.json ---- */

enum kind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
    enum kind kind;
    double num;
    char *str;          /* J_STR: the text (escapes other than \" \\ kept as written) */
    struct json **item; /* J_ARR, J_OBJ: the values */
    char **key;         /* J_OBJ: the keys */
    int n;
};

static const char *p;

static void skip(void) {
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
}

static struct json *parse(void);

static char *parse_string(void) {
    if (*p != '"') return NULL;
    p++;
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\' && *p) c = *p++;
        if (len + 2 > cap) s = realloc(s, cap *= 2);
        s[len++] = c;
    }
    if (*p != '"') { free(s); return NULL; }
    p++;
    s[len] = 0;
    return s;
}

static struct json *parse(void) {
    skip();
    struct json *j = calloc(1, sizeof *j);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        j->kind = *p == '{' ? J_OBJ : J_ARR;
        p++;
        skip();
        while (*p && *p != close) {
            j->item = realloc(j->item, (j->n + 1) * sizeof *j->item);
            j->key = realloc(j->key, (j->n + 1) * sizeof *j->key);
            j->key[j->n] = NULL;
            if (j->kind == J_OBJ) {
                if (!(j->key[j->n] = parse_string())) return NULL;
                skip();
                if (*p++ != ':') return NULL;
            }
            if (!(j->item[j->n] = parse())) return NULL;
            j->n++;
            skip();
            if (*p == ',') { p++; skip(); }
            else if (*p != close) return NULL;
        }
        if (*p++ != close) return NULL;
    } else if (*p == '"') {
        j->kind = J_STR;
        if (!(j->str = parse_string())) return NULL;
    } else if (!strncmp(p, "null", 4)) {
        j->kind = J_NULL; p += 4;
    } else if (!strncmp(p, "true", 4)) {
        j->kind = J_BOOL; j->num = 1; p += 4;
    } else if (!strncmp(p, "false", 5)) {
        j->kind = J_BOOL; p += 5;
    } else {
        char *end;
        j->kind = J_NUM;
        j->num = strtod(p, &end);
        if (end == p) return NULL;
        p = end;
    }
    return j;
}

/* get is the value of key in an object, or NULL. */
static struct json *get(struct json *o, const char *key) {
    if (!o || o->kind != J_OBJ) return NULL;
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key)) return o->item[i];
    return NULL;
}

static const char *str(struct json *j) { return j && j->kind == J_STR ? j->str : ""; }

/* ---- the game ---- */

struct move { int fr, fc, tr, tc, has_from; };

static struct move moves[1024];
static int nmoves;
static char color[SIZE][SIZE], type[SIZE][SIZE]; /* 0: empty ('F' counts as empty) */

static void add(int has_from, int fr, int fc, int tr, int tc) {
    if (nmoves < 1024) moves[nmoves++] = (struct move){fr, fc, tr, tc, has_from};
}

static int on_board(int r, int c) { return r >= 0 && r < SIZE && c >= 0 && c < SIZE; }

static int home_row(char side, int r) { return side == 'w' ? r <= 1 : r >= 3; }

static void setup_moves(struct json *state, char me) {
    int step = (int)get(state, "setupStep")->num;
    char rows_of = step == 2 ? (me == 'w' ? 'b' : 'w') : me;
    int blocked[SIZE][SIZE] = {0};
    struct json *bt = get(state, "blockedTiles");
    for (int i = 0; bt && bt->kind == J_ARR && i < bt->n; i++)
        blocked[(int)bt->item[i]->item[0]->num][(int)bt->item[i]->item[1]->num] = 1;
    int kinds[2][2], nk = 0;
    if (step == 4) {
        int bishops = 0, pawns = 0;
        for (int r = 0; r < SIZE; r++)
            for (int c = 0; c < SIZE; c++)
                if (color[r][c] == me) { bishops += type[r][c] == 'B'; pawns += type[r][c] == 'P'; }
        if (bishops < 2) { kinds[nk][0] = 0; kinds[nk++][1] = 3; }
        if (pawns < 3) { kinds[nk][0] = 0; kinds[nk++][1] = 4; }
    } else if (step >= 1 && step <= 3) {
        nk = 1;
    }
    for (int k = 0; k < nk; k++)
        for (int r = 0; r < SIZE; r++)
            for (int c = 0; c < SIZE; c++)
                if (home_row(rows_of, r) && !color[r][c] && !blocked[r][c])
                    add(step == 4, step == 4 ? kinds[k][0] : 0, step == 4 ? kinds[k][1] : 0, r, c);
}

static void play_moves(struct json *state, char me) {
    int sr = -1, sc = -1; /* the shielded square, if any */
    struct json *ab = get(state, "abilitiesActivated");
    for (int i = 0; ab && ab->kind == J_ARR && i < ab->n; i++) {
        struct json *t = get(ab->item[i], "target");
        if (!strcmp(str(get(ab->item[i], "name")), "shield") && t && t->kind == J_ARR && t->n == 2) {
            sr = (int)t->item[0]->num;
            sc = (int)t->item[1]->num;
        }
    }
    static const int kd[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int r = 0; r < SIZE; r++)
        for (int c = 0; c < SIZE; c++) {
            if (color[r][c] != me) continue;
            char t = type[r][c];
            if (t == 'P') {
                int f = me == 'w' ? 1 : -1;
                if (on_board(r + f, c) && !color[r + f][c]) add(1, r, c, r + f, c);
                for (int dc = -1; dc <= 1; dc += 2)
                    if (on_board(r + f, c + dc) && color[r + f][c + dc] && color[r + f][c + dc] != me && !(r + f == sr && c + dc == sc))
                        add(1, r, c, r + f, c + dc);
                continue;
            }
            int from = t == 'B' ? 4 : 0, to = t == 'R' ? 4 : 8;
            for (int d = from; d < to; d++) {
                int rr = r + kd[d][0], cc = c + kd[d][1];
                while (on_board(rr, cc)) {
                    if (color[rr][cc] != me && !(rr == sr && cc == sc)) add(1, r, c, rr, cc);
                    if (color[rr][cc] || t == 'K') break;
                    rr += kd[d][0];
                    cc += kd[d][1];
                }
            }
        }
}

static char *read_file(const char *name, size_t *len) {
    FILE *f = fopen(name, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap) buf = realloc(buf, (cap *= 2) + 1);
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bot /path/to/state.json\n");
        return 1;
    }
    size_t len;
    char *raw = read_file(argv[1], &len);
    if (!raw) { perror(argv[1]); return 1; }
    p = raw;
    struct json *state = parse();
    struct json *board = get(state, "board");
    if (!state || !get(state, "phase") || !board || board->kind != J_ARR || board->n != SIZE) {
        fprintf(stderr, "malformed state\n");
        return 1;
    }
    for (int r = 0; r < SIZE; r++)
        for (int c = 0; c < SIZE; c++) {
            struct json *sq = board->item[r]->n > c ? board->item[r]->item[c] : NULL;
            const char *t = str(get(sq, "type"));
            if (sq && sq->kind == J_OBJ && strcmp(t, "F")) {
                color[r][c] = str(get(sq, "color"))[0];
                type[r][c] = t[0];
            }
        }
    char me = str(get(state, "playerColor"))[0];

    /* The data file: turns played so far, which seeds the random source. */
    long turns = 0;
    char *memory = read_file(DATA_FILE, NULL);
    if (memory) {
        char *t = strstr(memory, "\"turns\"");
        if (t && (t = strchr(t, ':'))) turns = strtol(t + 1, NULL, 10);
    }
    uint64_t seed = 1469598103934665603ULL; /* FNV-1a of the state and the turns */
    for (size_t i = 0; i < len; i++) seed = (seed ^ (unsigned char)raw[i]) * 1099511628211ULL;
    seed ^= (uint64_t)turns * 0x9E3779B97F4A7C15ULL;
    srand((unsigned)(seed ^ (seed >> 32)));

    if (!strcmp(str(get(state, "phase")), "setup")) setup_moves(state, me);
    else play_moves(state, me);
    if (nmoves == 0) {
        fprintf(stderr, "no legal move\n");
        return 2;
    }
    struct move m = moves[rand() % nmoves];
    FILE *out = fopen("move.json", "w");
    if (!out) { perror("move.json"); return 3; }
    if (m.has_from) fprintf(out, "{\"move\": {\"from\": [%d, %d], \"to\": [%d, %d]}, ", m.fr, m.fc, m.tr, m.tc);
    else fprintf(out, "{\"move\": {\"to\": [%d, %d]}, ", m.tr, m.tc);
    fprintf(out, "\"ability\": {\"name\": null, \"target\": null}}\n");
    if (fclose(out)) { perror("move.json"); return 3; }
    FILE *mem = fopen(DATA_FILE, "w");
    if (!mem) { perror(DATA_FILE); return 3; }
    fprintf(mem, "{\"turns\": %ld}\n", turns + 1);
    return fclose(mem) ? 3 : 0;
}
