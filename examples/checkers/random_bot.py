"""Example checkers bot, written for the tournament framework's interface.

arena runs it unchanged: it imports this module and calls bot().move(plansza,
ruchy) with the board (an 8x8 numpy array from this bot's side: None on light
squares, 0 empty, 1 own man, 2 opponent's man, 3 own king, 4 opponent's king)
and the legal moves as ((r1, c1), (r2, c2)) pairs. It must return one of them.
"""
import random


class bot():
    def __init__(self):
        self.turns = 0

    def move(self, plansza, ruchy):
        # Seeded from the position, so the same game gives the same moves.
        rng = random.Random(str(plansza.tolist()) + str(ruchy) + str(self.turns))
        self.turns += 1
        # Prefer a capture that lands on the far row (a crowning), else anything.
        crowning = [m for m in ruchy if m[1][0] == 0]
        return rng.choice(crowning or ruchy)
