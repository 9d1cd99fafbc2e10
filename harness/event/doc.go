// Package event is the stored state of an event the server runs: its
// configuration (event.toml), teams and their tokens, sessions, uploads
// stored by content hash, the validation queue, the games played
// (scrimmages, the rated ladder, the final from the pinned submissions),
// the final's run and its scoreboard's rows, and the teams' disputes with
// their reruns. All of it lives in one directory, in SQLite (WAL; its
// layout moved forward by numbered migrations, migrate.go) and in files
// that are never changed once written.
//
// It reads and writes; it plays nothing, and imports nothing that plays (a
// test holds it to that): what validates, plays, judges and reruns
// (harness/services) records through its Store. It must never store a
// token (only its hash), acknowledge an upload that is not on disk and in
// the database, lose a validation or a game of the final to a crash (what
// was under way is taken up again when the event is opened for serving),
// rate a game the host aborted, or open a database a later arena wrote.
package event
