#!/usr/bin/env python3
"""Example bot for Prince Rupert's Tiles: a random valid line on every TURN.

It needs python3 and nothing else (standard library only). It reads the
dialogue on stdin, one message per line, and keeps what it was told:

- the opening, in either form: the engine's (START, SIZE n, r c, AMPLIFIERS L,
  L cells, LAID, maybe TERMINATED) or the bot interface's (n, r c,
  AMPLIFIERS L, L cells, LAID, maybe TERMINATED);
- its own cell, moved by its own MOVE commands;
- its own chains: LAID extends the active chain when the cell is next to that
  chain's last tile and starts a new chain otherwise; TERMINATED ends the
  active chain; UPDATE DESTROYED r c removes the chain whose tail (first
  tile) is r c;
- the opponent tiles it knows: UPDATE TILE r c, a TILE reply (it stands on
  one), and DESTROYED L with its L cells (gone again).

That is all a valid line depends on: MOVE must stay on the board; LAY is
refused on the bot's own tile and on an opponent tile it knows; TERMINATE needs
an active chain; TELEPORT i needs the bot on one of its tiles, i one of that
chain's indexes, and the chain not teleported on before; DESTROY needs an
opponent tile. The bot answers with MOVE d, MOVE d LAY or LAY, sometimes after
TERMINATE and TELEPORT i, or, standing on an opponent tile it knows, DESTROY,
and flushes every answer. It exits on GAMEOVER or at the end of its input.
"""
import random
import sys

STEPS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


class Bot:
    def __init__(self):
        self.n = 0                # the board is n x n; 0 until the opening says
        self.pos = None           # (r, c), 1-based, where the bot stands
        self.chains = []          # own chains, tail first; None once destroyed
        self.teleported = []      # by chain: TELEPORT was used on it
        self.active = None        # index of the active chain in chains
        self.own = {}             # the bot's tiles: cell -> index of its chain
        self.theirs = set()       # opponent tiles the bot knows of
        self.amplifiers = set()
        self.cells = 0            # "r c" lines still to come...
        self.cell_kind = None     # ...and what they are: "amplifier" or "destroyed"

    def cell(self, fields):
        """(r, c) if fields are "r c" on the board, else None."""
        if len(fields) != 2 or not all(f.isdigit() for f in fields):
            return None
        r, c = int(fields[0]), int(fields[1])
        return (r, c) if 1 <= r <= self.n and 1 <= c <= self.n else None

    def read(self, line):
        """Takes in one line the bot was sent (anything but TURN and GAMEOVER)."""
        f = line.split()
        if not f:
            return
        at = self.cell(f)
        if at is not None:
            self.read_cell(at)
        elif f[0] == "START":
            self.__init__()
        elif f[0] == "SIZE" and len(f) == 2:
            self.n = int(f[1])
        elif len(f) == 1 and self.n == 0 and f[0].isdigit():
            self.n = int(f[0])  # the bot interface's opening: n alone
        elif f[0] in ("AMPLIFIERS", "DESTROYED") and len(f) == 2:
            self.cells = int(f[1])
            self.cell_kind = "amplifier" if f[0] == "AMPLIFIERS" else "destroyed"
        elif f[0] == "LAID":
            self.laid()
        elif f[0] == "TERMINATED":
            self.active = None
        elif f[0] == "TILE":
            self.theirs.add(self.pos)  # the bot stands on an opponent tile
        elif f[0] == "UPDATE" and len(f) == 4 and f[1] == "TILE":
            at = self.cell(f[2:])
            if at is not None:
                self.theirs.add(at)
        elif f[0] == "UPDATE" and len(f) == 4 and f[1] == "DESTROYED":
            at = self.cell(f[2:])
            if at is not None:
                self.lost_chain(at)
        # EMPTY, HINT i, FAILED and TURNOVER change nothing the bot keeps.

    def read_cell(self, at):
        """An "r c" line: an amplifier, a destroyed opponent tile, or the start."""
        if self.cells > 0 and self.cell_kind == "amplifier":
            self.amplifiers.add(at)
            self.cells -= 1
        elif self.cells > 0 and self.cell_kind == "destroyed":
            self.theirs.discard(at)
            self.cells -= 1
        elif self.pos is None:
            self.pos = at

    def laid(self):
        if self.active is None or not adjacent(self.chains[self.active][-1], self.pos):
            self.chains.append([])
            self.teleported.append(False)
            self.active = len(self.chains) - 1
        self.chains[self.active].append(self.pos)
        self.own[self.pos] = self.active

    def lost_chain(self, tail):
        for i, chain in enumerate(self.chains):
            if chain and chain[0] == tail:
                for tile in chain:
                    del self.own[tile]
                self.chains[i] = None
                if self.active == i:
                    self.active = None
                return

    def step(self, at, d):
        r, c = at[0] + STEPS[d][0], at[1] + STEPS[d][1]
        return (r, c) if 1 <= r <= self.n and 1 <= c <= self.n else None

    def may_lay(self, at):
        # On an opponent tile the bot does not know LAY is valid (answered TILE).
        return at not in self.own and at not in self.theirs

    def choose(self):
        """A random valid line; the bot moves as it says."""
        if self.pos in self.theirs and random.randrange(2) == 0:
            return "DESTROY"  # valid on any opponent tile; it scores on a tail
        words = []  # TERMINATE and TELEPORT i, when the line has them
        if self.active is not None and random.randrange(10) == 0:
            words.append("TERMINATE")
            self.active = None
        i = self.own.get(self.pos)
        if i is not None and not self.teleported[i] and random.randrange(4) == 0:
            k = random.randrange(len(self.chains[i]))
            words.append("TELEPORT %d" % (k + 1))
            self.teleported[i] = True
            self.pos = self.chains[i][k]
        # The rest of the line, from where the bot stands now.
        rests = [""] if words else []  # TERMINATE or TELEPORT i alone is a line
        for d in "UDLR":
            to = self.step(self.pos, d)
            if to is None:
                continue
            rests.append("MOVE " + d)
            if self.may_lay(to):
                rests.append("MOVE " + d + " LAY")
        if self.may_lay(self.pos):
            rests.append("LAY")
        rest = random.choice(rests)
        if rest.startswith("MOVE "):
            # the referee moves the bot whatever it finds there
            self.pos = self.step(self.pos, rest[5])
        return " ".join(words + [rest]).strip()


def adjacent(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def main():
    bot = Bot()
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        line = line.strip()
        if line == "GAMEOVER":
            return
        if line == "TURN":
            print(bot.choose(), flush=True)
        else:
            bot.read(line)


if __name__ == "__main__":
    main()
