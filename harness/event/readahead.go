package event

import "context"

// readAheadAtMost is how much of the database ReadAhead reads: as much
// as the readers map.
const readAheadAtMost = 1 << 30

// ReadAhead reads the event's database from its start, readAheadAtMost
// bytes at most, into the kernel's cache, through SQLite (sqlitedb's
// ReadAhead: a descriptor of the file opened and closed beside SQLite's
// would drop its locks), and returns how much it read. A server just
// started, its host's cache cold (after a restart, or a quiet hour in which
// the host let the file's pages go), would otherwise read them from the
// disk one by one as the first burst of pages asks for them: a wait on the
// disk in the middle of a page, while every request behind it waits its
// turn. It stops when ctx ends.
func (s *Store) ReadAhead(ctx context.Context) (int64, error) {
	return s.r.ReadAhead(ctx, readAheadAtMost)
}
