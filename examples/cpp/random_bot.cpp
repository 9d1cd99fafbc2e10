// Example Code Clash bot in C++: a random legal mover.
//
// Follows the bot guide to the letter: run as `bot /path/to/state.json` with
// game_dir as the working directory, writes move.json there, exits 0 on a
// move, 1 when state.json is malformed, 2 when it has no legal move. It keeps
// its turn count in the data file cpp-bot.json. The C++ standard library
// only: the runtime image has no JSON library, so a small reader is below.
#include <cctype>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Json is a value of state.json: enough of JSON to read it.
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    double number = 0;
    std::string text;
    std::vector<Json> items;
    std::map<std::string, Json> fields;

    const Json& operator[](const std::string& key) const {
        static const Json none;
        auto it = fields.find(key);
        return it == fields.end() ? none : it->second;
    }
    int asInt() const { return static_cast<int>(number); }
};

class Reader {
  public:
    explicit Reader(const std::string& s) : s_(s) {}
    Json value() {
        space();
        Json j;
        if (peek() == '{') {
            j.kind = Json::Object;
            ++i_;
            while (space(), peek() != '}') {
                std::string key = string();
                space();
                expect(':');
                j.fields[key] = value();
                if (space(), peek() == ',') ++i_;
            }
            ++i_;
        } else if (peek() == '[') {
            j.kind = Json::Array;
            ++i_;
            while (space(), peek() != ']') {
                j.items.push_back(value());
                if (space(), peek() == ',') ++i_;
            }
            ++i_;
        } else if (peek() == '"') {
            j.kind = Json::String;
            j.text = string();
        } else if (word("null")) {
        } else if (word("true")) {
            j.kind = Json::Bool;
            j.number = 1;
        } else if (word("false")) {
            j.kind = Json::Bool;
        } else {
            std::size_t used = 0;
            j.kind = Json::Number;
            j.number = std::stod(s_.substr(i_, 32), &used);
            i_ += used;
        }
        return j;
    }

  private:
    char peek() {
        if (i_ >= s_.size()) throw std::runtime_error("unexpected end");
        return s_[i_];
    }
    void space() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    void expect(char c) {
        if (peek() != c) throw std::runtime_error(std::string("expected ") + c);
        ++i_;
    }
    bool word(const char* w) {
        std::string ww(w);
        if (s_.compare(i_, ww.size(), ww) != 0) return false;
        i_ += ww.size();
        return true;
    }
    std::string string() {
        expect('"');
        std::string out;
        while (peek() != '"') {
            char c = s_[i_++];
            if (c == '\\') c = s_[i_++];
            out += c;
        }
        ++i_;
        return out;
    }
    const std::string& s_;
    std::size_t i_ = 0;
};

constexpr int kSize = 5;
const char* kDataFile = "cpp-bot.json";

struct Move {
    bool hasFrom;
    int fr, fc, tr, tc;
};

struct Square {
    std::string color, type;  // empty: no piece (a fog square "F" counts as none)
};

bool onBoard(int r, int c) { return r >= 0 && r < kSize && c >= 0 && c < kSize; }
bool homeRow(const std::string& side, int r) { return side == "white" ? r <= 1 : r >= 3; }

std::vector<Move> setupMoves(const Json& state, const std::vector<std::vector<Square>>& board, const std::string& me) {
    int step = state["setupStep"].asInt();
    std::string rowsOf = step == 2 ? (me == "white" ? "black" : "white") : me;
    bool blocked[kSize][kSize] = {};
    for (const Json& t : state["blockedTiles"].items) blocked[t.items.at(0).asInt()][t.items.at(1).asInt()] = true;
    std::vector<std::pair<int, int>> kinds;
    if (step == 4) {
        int bishops = 0, pawns = 0;
        for (const auto& row : board)
            for (const Square& s : row)
                if (s.color == me) {
                    bishops += s.type == "B";
                    pawns += s.type == "P";
                }
        if (bishops < 2) kinds.push_back({0, 3});
        if (pawns < 3) kinds.push_back({0, 4});
    } else if (step >= 1 && step <= 3) {
        kinds.push_back({-1, -1});
    }
    std::vector<Move> out;
    for (auto [kr, kc] : kinds)
        for (int r = 0; r < kSize; r++)
            for (int c = 0; c < kSize; c++)
                if (homeRow(rowsOf, r) && board[r][c].color.empty() && !blocked[r][c]) out.push_back({kr >= 0, kr, kc, r, c});
    return out;
}

std::vector<Move> playMoves(const Json& state, const std::vector<std::vector<Square>>& board, const std::string& me) {
    int sr = -1, sc = -1;  // the shielded square, if any
    for (const Json& a : state["abilitiesActivated"].items)
        if (a["name"].text == "shield" && a["target"].items.size() == 2) {
            sr = a["target"].items[0].asInt();
            sc = a["target"].items[1].asInt();
        }
    static const int dirs[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    std::vector<Move> out;
    for (int r = 0; r < kSize; r++)
        for (int c = 0; c < kSize; c++) {
            if (board[r][c].color != me) continue;
            const std::string& t = board[r][c].type;
            if (t == "P") {
                int f = me == "white" ? 1 : -1;
                if (onBoard(r + f, c) && board[r + f][c].color.empty()) out.push_back({true, r, c, r + f, c});
                for (int dc : {-1, 1}) {
                    int rr = r + f, cc = c + dc;
                    if (onBoard(rr, cc) && !board[rr][cc].color.empty() && board[rr][cc].color != me && !(rr == sr && cc == sc))
                        out.push_back({true, r, c, rr, cc});
                }
                continue;
            }
            int from = t == "B" ? 4 : 0, to = t == "R" ? 4 : 8;
            for (int d = from; d < to; d++)
                for (int rr = r + dirs[d][0], cc = c + dirs[d][1]; onBoard(rr, cc); rr += dirs[d][0], cc += dirs[d][1]) {
                    if (board[rr][cc].color != me && !(rr == sr && cc == sc)) out.push_back({true, r, c, rr, cc});
                    if (!board[rr][cc].color.empty() || t == "K") break;
                }
        }
    return out;
}

std::string readFile(const std::string& name) {
    std::ifstream in(name, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: bot /path/to/state.json\n";
        return 1;
    }
    std::string raw;
    Json state;
    std::vector<std::vector<Square>> board(kSize, std::vector<Square>(kSize));
    try {
        raw = readFile(argv[1]);
        state = Reader(raw).value();
        const Json& rows = state["board"];
        if (rows.items.size() != kSize || state["phase"].kind != Json::String) throw std::runtime_error("no board or phase");
        for (int r = 0; r < kSize; r++)
            for (int c = 0; c < kSize; c++) {
                const Json& sq = rows.items[r].items.at(c);
                if (sq.kind == Json::Object && sq["type"].text != "F") board[r][c] = {sq["color"].text, sq["type"].text};
            }
    } catch (const std::exception& e) {
        std::cerr << "malformed state: " << e.what() << "\n";
        return 1;
    }
    long turns = 0;
    try {
        std::string memory = readFile(kDataFile);
        turns = static_cast<long>(Reader(memory).value()["turns"].number);
    } catch (const std::exception&) {
        // the first turn: no data file yet
    }
    std::seed_seq seed(raw.begin(), raw.end());
    std::mt19937_64 rng(seed);
    rng.discard(static_cast<unsigned long long>(turns));
    std::string me = state["playerColor"].text;
    std::vector<Move> moves = state["phase"].text == "setup" ? setupMoves(state, board, me) : playMoves(state, board, me);
    if (moves.empty()) {
        std::cerr << "no legal move\n";
        return 2;
    }
    Move m = moves[std::uniform_int_distribution<std::size_t>(0, moves.size() - 1)(rng)];
    std::ofstream out("move.json");
    out << "{\"move\": {";
    if (m.hasFrom) out << "\"from\": [" << m.fr << ", " << m.fc << "], ";
    out << "\"to\": [" << m.tr << ", " << m.tc << "]}, \"ability\": {\"name\": null, \"target\": null}}\n";
    std::ofstream mem(kDataFile);
    mem << "{\"turns\": " << turns + 1 << "}\n";
    out.close();
    mem.close();
    return out && mem ? 0 : 3;
}
