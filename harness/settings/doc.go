// Package settings is how games are to be played, as a command's flags or
// an event's configuration say it, checked once for every command: the game,
// its rule options, the length and per-turn limits, the bots' resources and
// the fault policy.
//
// It must never play anything: harness/match plays with what it resolves.
package settings
