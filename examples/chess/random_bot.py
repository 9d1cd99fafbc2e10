#!/usr/bin/env python3
"""Example chess bot: a random legal move, in the event's line protocol.

It reads its colour, then on each of its turns a line
"<move> <time> <time> <FEN>" and answers with a move such as e2e4, e7e8q or
O-O; the "A <time>" or "D <time>" line after each answer is read and let be.
The random source is seeded from the position, so the same game gives the
same moves. Standard library only.
"""
import random
import sys

KNIGHT = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
KING = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
ROOK = KING[:4]
BISHOP = KING[4:]


def parse(fen):
    """The board as {(file, rank): piece} (0-7 each), and the FEN's fields."""
    fields = fen.split()
    board = {}
    for i, row in enumerate(fields[0].split("/")):
        rank, f = 7 - i, 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                board[(f, rank)] = ch
                f += 1
    return board, fields[1], fields[2], fields[3]


def mine(piece, side):
    return piece.isupper() if side == "w" else piece.islower()


def name(sq):
    return "abcdefgh"[sq[0]] + str(sq[1] + 1)


def attacked(board, sq, by):
    """Whether side `by` ("w" or "b") attacks square sq."""
    f, r = sq
    up = -1 if by == "w" else 1  # where the attacking pawn stands, from sq
    for df in (-1, 1):
        p = board.get((f + df, r + up))
        if p and mine(p, by) and p.upper() == "P":
            return True
    for kinds, steps, slide in (("N", KNIGHT, False), ("K", KING, False), ("RQ", ROOK, True), ("BQ", BISHOP, True)):
        for df, dr in steps:
            q = (f + df, r + dr)
            while 0 <= q[0] < 8 and 0 <= q[1] < 8:
                p = board.get(q)
                if p:
                    if mine(p, by) and p.upper() in kinds:
                        return True
                    break
                if not slide:
                    break
                q = (q[0] + df, q[1] + dr)
    return False


def pseudo(board, side, castling, ep):
    """Every move by the rules of movement, as (from, to, promotion, text)."""
    out = []
    other = "b" if side == "w" else "w"
    for (f, r), p in list(board.items()):
        if not mine(p, side):
            continue
        kind = p.upper()
        if kind == "P":
            d, start, last = (1, 1, 7) if side == "w" else (-1, 6, 0)
            targets = []
            if (f, r + d) not in board:
                targets.append((f, r + d))
                if r == start and (f, r + 2 * d) not in board:
                    targets.append((f, r + 2 * d))
            for df in (-1, 1):
                q = (f + df, r + d)
                if not 0 <= q[0] < 8:
                    continue
                t = board.get(q)
                if (t and not mine(t, side)) or (ep != "-" and name(q) == ep):
                    targets.append(q)
            for q in targets:
                promo = "q" if q[1] == last else ""
                out.append(((f, r), q, promo, name((f, r)) + name(q) + promo))
            continue
        steps, slide = {"N": (KNIGHT, False), "K": (KING, False), "R": (ROOK, True),
                        "B": (BISHOP, True), "Q": (KING, True)}[kind]
        for df, dr in steps:
            q = (f + df, r + dr)
            while 0 <= q[0] < 8 and 0 <= q[1] < 8:
                t = board.get(q)
                if t and mine(t, side):
                    break
                out.append(((f, r), q, "", name((f, r)) + name(q)))
                if t or not slide:
                    break
                q = (q[0] + df, q[1] + dr)
    # Castling: the right, the squares between empty, and the king not in
    # check, nor passing or landing on an attacked square.
    rank = 0 if side == "w" else 7
    king = "K" if side == "w" else "k"
    if board.get((4, rank)) == king:
        for right, between, path, text in (("K", (5, 6), (4, 5, 6), "O-O"), ("Q", (1, 2, 3), (4, 3, 2), "O-O-O")):
            if (right if side == "w" else right.lower()) not in castling:
                continue
            if any((f, rank) in board for f in between):
                continue
            if any(attacked(board, (f, rank), other) for f in path):
                continue
            out.append(((4, rank), (path[2], rank), "", text))
    return out


def play(board, side, move):
    """The board after move (a copy)."""
    (f, r), to, promo, text = move
    b = dict(board)
    p = b.pop((f, r))
    if p.upper() == "P" and f != to[0] and to not in b:
        b.pop((to[0], r), None)  # en passant takes the pawn beside
    if text.startswith("O-O"):
        rook_from, rook_to = ((7, 5) if text == "O-O" else (0, 3))
        b[(rook_to, r)] = b.pop((rook_from, r))
    b[to] = (promo.upper() if side == "w" else promo) if promo else p
    return b


def legal(fen):
    board, side, castling, ep = parse(fen)
    other = "b" if side == "w" else "w"
    king = "K" if side == "w" else "k"
    out = []
    for m in pseudo(board, side, castling, ep):
        after = play(board, side, m)
        at = next(sq for sq, p in after.items() if p == king)
        if not attacked(after, at, other):
            out.append(m[3])
    return out


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        parts = line.split()
        if len(parts) != 9:  # the colour, or "A <time>" after an answer
            continue
        fen = " ".join(parts[3:])
        moves = legal(fen)
        if not moves:  # the game is over; no question comes
            continue
        print(random.Random(fen).choice(moves), flush=True)


if __name__ == "__main__":
    main()
