package rules

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
  stderr is free for logs (its last 8 KiB are kept with the match).
`
