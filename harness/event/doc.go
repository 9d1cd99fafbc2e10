// Package event is the state of an event the server runs: its configuration
// (event.toml), teams and their tokens, sessions, uploads stored by content
// hash, the games played, and the queue that validates every upload through
// the validate pipeline. All of it lives in one directory, in SQLite (WAL)
// and in files that are never changed once written.
//
// It must never store a token (only its hash), acknowledge an upload that is
// not on disk and in the database, or lose a validation to a crash: one that
// was under way is queued again when the event is opened for serving.
package event
