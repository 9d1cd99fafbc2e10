// Package event is the state of an event the server runs: its configuration
// (event.toml), teams and their tokens, sessions, uploads stored by content
// hash, the games played, the queue that validates every upload through the
// validate pipeline, and the games the event plays through the tournament
// runner: scrimmages, the rated ladder, the final from the pinned
// submissions; and the teams' disputes with their reruns. All of it lives in
// one directory, in SQLite (WAL) and in files that are never changed once
// written.
//
// It must never store a token (only its hash), acknowledge an upload that is
// not on disk and in the database, lose a validation or a game of the final
// to a crash (what was under way is taken up again when the event is opened
// for serving), rate a game the host aborted, or play a game any other way
// than through the tournament runner.
package event
