# A tiles bot that only walks up and down its column: always a valid line.
import sys

row, lines, size_seen = 0, 0, 0
for line in sys.stdin:
    line = line.strip()
    lines += 1
    if line.startswith("SIZE "):
        size_seen = lines
        continue
    if size_seen and lines == size_seen + 1:
        row = int(line.split()[0])
        continue
    if line == "TURN":
        if row > 1:
            print("MOVE U", flush=True)
            row -= 1
        else:
            print("MOVE D", flush=True)
            row += 1
    if line == "GAMEOVER":
        break
