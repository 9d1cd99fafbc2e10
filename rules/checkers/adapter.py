#!/usr/bin/env python3
"""arena's adapter for checkers bots written as Python classes.

It finds the one module beside it that defines `class bot`, imports it, and
answers each request line "board=<64 chars> moves=<r1c1r2c2,...>" by calling
bot().move(plansza, ruchy) with the board as an 8x8 numpy array from the bot's
side (None on light squares). Whatever the bot prints goes to stderr, so it
cannot break the protocol.
"""
import contextlib
import glob
import importlib.util
import os
import re
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.stdout


def find_module():
    me = os.path.abspath(__file__)
    for path in sorted(glob.glob(os.path.join(HERE, "**", "*.py"), recursive=True)):
        if os.path.abspath(path) == me:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            if re.search(r"^class\s+bot\b", f.read(), re.M):
                return path
    sys.exit("arena adapter: no module defines class bot")


def load():
    path = find_module()
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("team_bot", path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(sys.stderr):
        spec.loader.exec_module(module)
        return module.bot()


def parse(line):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    cells = fields.get("board", "")
    plansza = np.empty((8, 8), dtype=object)
    for i, ch in enumerate(cells[:64]):
        plansza[i // 8, i % 8] = None if ch == "-" else int(ch)
    ruchy = []
    for m in filter(None, fields.get("moves", "").split(",")):
        ruchy.append(((int(m[0]), int(m[1])), (int(m[2]), int(m[3]))))
    return plansza, ruchy


def main():
    player = load()
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("board="):
            continue
        plansza, ruchy = parse(line)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                choice = player.move(plansza, ruchy)
            (r1, c1), (r2, c2) = choice
            answer = "%d%d%d%d" % (int(r1), int(c1), int(r2), int(c2))
        except Exception:
            traceback.print_exc()
            answer = "error"
        OUT.write(answer + "\n")
        OUT.flush()


if __name__ == "__main__":
    main()
