package rules

import "time"

// ProgramStart is how much longer than the move time a bot's first answer
// may take: the program starts inside that answer's clock (an interpreter
// such as Python's takes from 20 ms on an idle machine to several times that
// on a busy one), and starting is not thinking. Later answers get the move
// time alone; a time bank, where the game has one, is charged every answer's
// whole wall time.
const ProgramStart = time.Second

// LineBotProcess is how a bot of any line game is run and speaks, as each
// game's explanation says it (in its PROTOCOL section).
const LineBotProcess = `  The bot is one process for the whole game, started with no arguments (in
  official matches /bot/<executable>, working directory /game, the
  submission's files read-only in /bot). It reads lines on stdin and writes
  lines on stdout. Every line ends with a newline (a carriage return before
  it is ignored); an answer counts when its newline arrives, so flush stdout
  after each one. Writing anything before it is asked is invalid output,
  and so is an answer line longer than 64 KiB (65,536 bytes before its
  newline). Numbers in answers are written in ASCII digits 0-9.
  The bot's first answer may take 1 s longer than the move time, since its
  program starts inside that answer's clock; every later answer gets the
  move time alone (a time bank, where the game has one, is charged as usual).
  stderr is free for logs (its last 8 KiB are kept with the match).
`
