// A tiles bot that only walks up and down its column: always a valid line.
#include <iostream>
#include <sstream>
#include <string>

int main() {
    std::string line;
    int row = 0, lines = 0, sizeSeen = 0;
    while (std::getline(std::cin, line)) {
        lines++;
        if (line.rfind("SIZE ", 0) == 0) { sizeSeen = lines; continue; }
        if (sizeSeen && lines == sizeSeen + 1) { std::istringstream(line) >> row; continue; }
        if (line == "TURN") {
            if (row > 1) { std::cout << "MOVE U" << std::endl; row--; }
            else { std::cout << "MOVE D" << std::endl; row++; }
        }
        if (line == "GAMEOVER") return 0;
    }
}
