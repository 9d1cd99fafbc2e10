package rules

// Follower is implemented by line games whose bots cannot be handed the
// position in one question (FromView fails): a bot must keep what it was told
// over the whole dialogue. Follow returns a Listener that does so for one
// bot, as a participant's bot would; the built-in random bot plays with it.
type Follower interface {
	Follow(opts map[string]string) (Listener, error)
}

// Listener keeps what one bot of a line game knows from the lines it is sent
// and the answers it gave.
type Listener interface {
	// Hear reads one line the bot is sent. For a question it returns the
	// answers the bot may give, every one of them valid whatever the bot
	// does not know; otherwise nil. An error is a line the game never sends.
	Hear(line string) ([]string, error)
	// Said records the bot's answer to the last question.
	Said(answer string)
}
