#!/usr/bin/env python3
"""Example ACM chess 6x6 bot: a random legal move, in the event's protocol.

It reads its colour, then on each of its turns a line
"<move> <ranks> <side> <plies>" and answers with a move such as a2a4. Moving
into attack is allowed in this game, so every move the pieces can make is
legal. The random source is seeded from the position, so the same game gives
the same moves. Standard library only.
"""
import random
import sys

SIZE = 6
KING = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
ORTH, DIAG = KING[:4], KING[4:]
KNIGHT = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
# Each piece: the steps it takes, and whether it slides on along them.
STEPS = {
    "K": (KING, False),
    "Q": (KING, True),
    "R": (ORTH, True),
    "B": (DIAG, True),
    "N": (KNIGHT, False),
    "S": (DIAG + [(2, 0), (-2, 0), (0, 2), (0, -2)], False),
    "J": (KING + [(2 * f, 2 * r) for f, r in KING], False),
}


def parse(ranks):
    """The board as {(file, rank): piece}, files and ranks 0-5."""
    board = {}
    for i, row in enumerate(ranks.split("/")):
        rank, f = SIZE - 1 - i, 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                board[(f, rank)] = ch
                f += 1
    return board


def mine(piece, side):
    return piece.isupper() if side == "w" else piece.islower()


def name(sq):
    return "abcdef"[sq[0]] + str(sq[1] + 1)


def on(sq):
    return 0 <= sq[0] < SIZE and 0 <= sq[1] < SIZE


def moves(board, side):
    out = []
    for (f, r), p in board.items():
        if not mine(p, side):
            continue
        targets = []
        if p.upper() == "P":
            d, start = (1, 1) if side == "w" else (-1, SIZE - 2)
            if on((f, r + d)) and (f, r + d) not in board:
                targets.append((f, r + d))
                # Two squares from the starting rank is legal under either
                # ruling of the double step.
                if r == start and (f, r + 2 * d) not in board:
                    targets.append((f, r + 2 * d))
            for df in (-1, 1):
                q = (f + df, r + d)
                if on(q) and q in board and not mine(board[q], side):
                    targets.append(q)
        else:
            steps, slide = STEPS[p.upper()]
            for df, dr in steps:
                q = (f + df, r + dr)
                while on(q):
                    t = board.get(q)
                    if t and mine(t, side):
                        break
                    targets.append(q)
                    if t or not slide:
                        break
                    q = (q[0] + df, q[1] + dr)
        out += [name((f, r)) + name(q) for q in targets]
    return sorted(out)


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        parts = line.split()
        if len(parts) != 4:  # the colour
            continue
        ranks, side = parts[1], parts[2]
        legal = moves(parse(ranks), side)
        if legal:
            print(random.Random(" ".join(parts[1:])).choice(legal), flush=True)


if __name__ == "__main__":
    main()
