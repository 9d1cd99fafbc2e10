#!/usr/bin/env python3
"""Example Code Clash bot in Python: a random legal mover.

Follows the bot guide to the letter: run as `random_bot.py /path/to/state.json`
with game_dir as the working directory, writes move.json there, exits 0 on a
move, 1 when state.json is malformed, 2 when it has no legal move, 3 on an
internal error. It keeps its turn count in the data file py-bot.json.

It needs python3 in the image, and nothing but its standard library: the
runtime image has python3 (arena image build installs it on any base, and
arena doctor shows its version), so the script is submitted as it is.
"""
import hashlib
import json
import os
import random
import sys

SIZE = 5
DATA_FILE = "py-bot.json"


def home_row(color, r):
    return r in (0, 1) if color == "white" else r in (3, 4)


def forward(color):
    return 1 if color == "white" else -1


def on_board(r, c):
    return 0 <= r < SIZE and 0 <= c < SIZE


def setup_moves(state):
    me = state["playerColor"]
    other = "black" if me == "white" else "white"
    step = state["setupStep"]
    board = state["board"]
    blocked = {tuple(t) for t in state.get("blockedTiles", [])}
    rows_of = other if step == 2 else me
    kinds = {1: [None], 2: [None], 3: [None]}.get(step)
    if step == 4:
        bishops = sum(1 for row in board for p in row if p and p["color"] == me and p["type"] == "B")
        pawns = sum(1 for row in board for p in row if p and p["color"] == me and p["type"] == "P")
        kinds = ([[0, 3]] if bishops < 2 else []) + ([[0, 4]] if pawns < 3 else [])
    out = []
    for kind in kinds:
        for r in range(SIZE):
            for c in range(SIZE):
                if home_row(rows_of, r) and board[r][c] is None and (r, c) not in blocked:
                    move = {"to": [r, c]}
                    if kind is not None:
                        move["from"] = kind
                    out.append(move)
    return out


def play_moves(state):
    me = state["playerColor"]
    board = state["board"]
    shielded = None
    for a in state.get("abilitiesActivated", []):
        if a["name"] == "shield" and a.get("target"):
            shielded = tuple(a["target"])

    def piece(r, c):
        p = board[r][c]
        return None if p is None or p["type"] == "F" else p

    out = []
    for r in range(SIZE):
        for c in range(SIZE):
            p = piece(r, c)
            if p is None or p["color"] != me:
                continue
            targets = []
            t = p["type"]
            if t == "K":
                targets = [(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
            elif t in "RBQ":
                dirs = []
                if t in "RQ":
                    dirs += [(1, 0), (-1, 0), (0, 1), (0, -1)]
                if t in "BQ":
                    dirs += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
                for dr, dc in dirs:
                    rr, cc = r + dr, c + dc
                    while on_board(rr, cc):
                        targets.append((rr, cc))
                        if piece(rr, cc) is not None:
                            break
                        rr, cc = rr + dr, cc + dc
            elif t == "P":
                f = forward(me)
                if on_board(r + f, c) and piece(r + f, c) is None:
                    out.append({"from": [r, c], "to": [r + f, c]})
                for dc in (-1, 1):
                    q = piece(r + f, c + dc) if on_board(r + f, c + dc) else None
                    if q is not None and q["color"] != me and (r + f, c + dc) != shielded:
                        out.append({"from": [r, c], "to": [r + f, c + dc]})
                continue
            for rr, cc in targets:
                if not on_board(rr, cc) or (rr, cc) == shielded:
                    continue
                q = piece(rr, cc)
                if q is None or q["color"] != me:
                    out.append({"from": [r, c], "to": [rr, cc]})
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: random_bot.py /path/to/state.json", file=sys.stderr)
        return 1
    try:
        with open(sys.argv[1], "rb") as f:
            raw = f.read()
        state = json.loads(raw)
        phase = state["phase"]
    except (OSError, ValueError, KeyError) as e:
        print("malformed state:", e, file=sys.stderr)
        return 1
    memory = {"turns": 0}
    if os.path.exists(DATA_FILE):
        with open(DATA_FILE) as f:
            memory = json.load(f)
    rng = random.Random(hashlib.sha256(raw + str(memory["turns"]).encode()).digest())
    moves = setup_moves(state) if phase == "setup" else play_moves(state)
    if not moves:
        print("no legal move", file=sys.stderr)
        return 2
    move = rng.choice(moves)
    with open("move.json", "w") as f:
        json.dump({"move": move, "ability": {"name": None, "target": None}}, f)
    memory["turns"] += 1
    with open(DATA_FILE, "w") as f:
        json.dump(memory, f)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # the guide's exit code 3: internal error
        print("internal error:", repr(e), file=sys.stderr)
        sys.exit(3)
