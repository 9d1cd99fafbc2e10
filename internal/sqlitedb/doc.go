// Package sqlitedb is the one place arena opens its SQLite databases: the
// event's and every tournament's. It must never open, read, copy or close a
// database file, or one of its journals, other than through SQLite, and no
// other package may either.
//
// On Linux, closing any descriptor of a file drops every POSIX lock the
// process holds on it, SQLite's included ("How To Corrupt An SQLite
// Database File", section 2.2). A database in WAL mode keeps a shared lock
// on its file for as long as a connection is open; with it gone, the next
// connection of another process that closes (a backup, an organizer's
// sqlite3) believes it is the last one, checkpoints and deletes the journal
// under the connections still open, and every write committed after that
// goes to an unlinked file. So a database is read ahead through SQLite
// (ReadAhead), and closing one checks that the lock was held all along
// (DB.Close): a code path that broke the rule fails loudly, in the tests and
// in the server.
package sqlitedb
