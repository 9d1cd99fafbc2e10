package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The event's database is made and upgraded by numbered migrations: its
// PRAGMA user_version is how many of them it had. Opening it runs the ones
// it lacks, all in one transaction that sets user_version too, so a
// database is always at one version, never between two.
//
// A migration, once released, is never changed: a new layout is a new
// migration appended to migrations (and SchemaVersion grows with it).

// migration brings the database from the version before it to its own,
// in migrate's transaction.
type migration func(context.Context, querier) error

// migrations are the database's migrations: migrations[i] is migration
// i+1. A new one is appended at the end.
var migrations = [...]migration{
	migrate1,
	migrate2,
	migrate3,
	migrate4,
}

// SchemaVersion is how many migrations this arena knows: the user_version
// of every event database it opened.
const SchemaVersion = len(migrations)

// NewerError is a database that had more migrations (Have) than this arena
// knows (Know): it was written by a later arena, and is left as it is.
type NewerError struct{ Have, Know int }

func (e NewerError) Error() string {
	return fmt.Sprintf("the event's database is at version %d but this arena knows versions up to %d: it was written by a later arena; open it with that arena (or a newer one)", e.Have, e.Know)
}

// migrate runs the migrations the database lacks: all of them or none, in
// one transaction (a migration killed halfway leaves nothing half counted
// or half numbered) that sets user_version too, taken with the write lock
// at once, so that a second process opening the event meanwhile waits for
// it and finds it done. A database newer than this arena knows is refused
// before anything is written to it, its journal mode included (migrate
// sets WAL).
func migrate(ctx context.Context, w *sql.DB) error {
	conn, err := w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := version(ctx, conn); err != nil {
		return err
	}
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if err := migrateIn(ctx, conn); err != nil {
		_, rollback := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return errors.Join(err, rollback)
	}
	_, err = conn.ExecContext(ctx, `COMMIT`)
	return err
}

// version is the database's user_version, or a NewerError.
func version(ctx context.Context, q querier) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, err
	}
	if v > SchemaVersion {
		return v, NewerError{Have: v, Know: SchemaVersion}
	}
	return v, nil
}

// migrateIn runs the migrations after the database's version, in the
// transaction of q, and sets the version.
func migrateIn(ctx context.Context, q querier) error {
	v, err := version(ctx, q)
	if err != nil || v == SchemaVersion {
		return err
	}
	for i := v; i < SchemaVersion; i++ {
		if err := migrations[i](ctx, q); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	// PRAGMA takes no parameter: the number is this package's own.
	_, err = q.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion))
	return err
}

// querier runs statements in migrate's transaction.
type querier interface {
	execer
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// Migration 1 is every event database kept before the migrations were
// numbered (user_version 0, whatever columns it had): the base schema, the
// columns added since, their indexes, and the backfills of what the
// columns and tables added keep. Each step looks first whether it is
// needed, so a database made by the last arena before numbering, which
// has it all, is left as it was.

var schema = `
CREATE TABLE IF NOT EXISTS teams (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	members TEXT NOT NULL DEFAULT '',
	contact TEXT NOT NULL DEFAULT '',
	token_hash TEXT NOT NULL UNIQUE,
	disabled INTEGER NOT NULL DEFAULT 0,
	pinned INTEGER,
	created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS admin (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	token_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
	id_hash TEXT PRIMARY KEY,
	team_id INTEGER,
	admin INTEGER NOT NULL DEFAULT 0,
	csrf TEXT NOT NULL,
	expires TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
	id INTEGER PRIMARY KEY,
	team_id INTEGER NOT NULL REFERENCES teams(id),
	sha256 TEXT NOT NULL,
	size INTEGER NOT NULL,
	filename TEXT NOT NULL,
	uploaded TEXT NOT NULL,
	state TEXT NOT NULL,
	summary TEXT NOT NULL DEFAULT '',
	started TEXT NOT NULL DEFAULT '',
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS submissions_team ON submissions(team_id, id);
CREATE INDEX IF NOT EXISTS submissions_state ON submissions(state, id);
CREATE TABLE IF NOT EXISTS games (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,
	white_team INTEGER,
	black_team INTEGER,
	white_submission INTEGER,
	black_submission INTEGER,
	white_name TEXT NOT NULL,
	black_name TEXT NOT NULL,
	white_sha256 TEXT NOT NULL,
	black_sha256 TEXT NOT NULL,
	dir TEXT NOT NULL,
	winner TEXT NOT NULL,
	reason TEXT NOT NULL,
	plies INTEGER NOT NULL,
	finished TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS games_white ON games(white_team, id);
CREATE UNIQUE INDEX IF NOT EXISTS games_dir ON games(dir);
CREATE TABLE IF NOT EXISTS scrimmages (
	id INTEGER PRIMARY KEY,
	team_id INTEGER NOT NULL REFERENCES teams(id),
	rival_team INTEGER,
	submission INTEGER NOT NULL,
	rival_submission INTEGER,
	state TEXT NOT NULL,
	message TEXT NOT NULL DEFAULT '',
	created TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS scrimmages_team ON scrimmages(team_id, id);
CREATE INDEX IF NOT EXISTS scrimmages_state ON scrimmages(state, id);
CREATE TABLE IF NOT EXISTS ratings (
	team_id INTEGER PRIMARY KEY REFERENCES teams(id),
	submission INTEGER NOT NULL,
	rating REAL NOT NULL,
	deviation REAL NOT NULL,
	volatility REAL NOT NULL,
	games INTEGER NOT NULL DEFAULT 0,
	updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_pairs (
	id INTEGER PRIMARY KEY,
	a_team INTEGER NOT NULL,
	b_team INTEGER NOT NULL,
	a_submission INTEGER NOT NULL,
	b_submission INTEGER NOT NULL,
	state TEXT NOT NULL,
	created TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ladder_pairs_state ON ladder_pairs(state, id);
CREATE TABLE IF NOT EXISTS host_replays (
	dir TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS closing (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	closed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS final_entries (
	team_id INTEGER PRIMARY KEY REFERENCES teams(id),
	submission INTEGER NOT NULL,
	sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS games_black ON games(black_team, id);
CREATE INDEX IF NOT EXISTS games_kind ON games(kind, id);
CREATE TABLE IF NOT EXISTS final_run (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	games_per_pair INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	max_attempts INTEGER NOT NULL,
	seed INTEGER NOT NULL,
	started TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS final_players (
	team INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS freeze (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_history (
	team_id INTEGER NOT NULL REFERENCES teams(id),
	pair INTEGER NOT NULL,
	submission INTEGER NOT NULL,
	rating REAL NOT NULL,
	deviation REAL NOT NULL,
	at TEXT NOT NULL,
	PRIMARY KEY (team_id, pair)
);
CREATE TABLE IF NOT EXISTS disputes (
	id INTEGER PRIMARY KEY,
	game_id INTEGER NOT NULL REFERENCES games(id),
	team_id INTEGER NOT NULL REFERENCES teams(id),
	message TEXT NOT NULL,
	filed TEXT NOT NULL,
	verdict TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL DEFAULT 'open',
	answer TEXT NOT NULL DEFAULT '',
	answered TEXT NOT NULL DEFAULT '',
	rerun_ply INTEGER NOT NULL DEFAULT 0,
	rerun TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS disputes_team ON disputes(team_id, id);
CREATE TABLE IF NOT EXISTS dispute_reruns (
	id INTEGER PRIMARY KEY,
	dispute_id INTEGER NOT NULL REFERENCES disputes(id),
	ply INTEGER NOT NULL,
	text TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dispute_reruns_dispute ON dispute_reruns(dispute_id, id);
CREATE INDEX IF NOT EXISTS disputes_state ON disputes(state, id);
CREATE TABLE IF NOT EXISTS audit (
	id INTEGER PRIMARY KEY,
	at TEXT NOT NULL,
	action TEXT NOT NULL,
	detail TEXT NOT NULL
);
`

// columns are the columns added to the schema's tables since events were
// first kept: an event made before them gains them when it is opened.
var columns = []struct{ table, column, def string }{
	{"teams", "bot_name", "TEXT"},
	{"submissions", "admitted", "TEXT NOT NULL DEFAULT ''"},
	{"submissions", "admitted_at", "TEXT NOT NULL DEFAULT ''"},
	{"submissions", "cannot_play", "TEXT NOT NULL DEFAULT ''"},
	{"games", "rated", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "course", "TEXT NOT NULL DEFAULT ''"},
	{"games", "turns", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "duration_ms", "REAL NOT NULL DEFAULT 0"},
	{"final_run", "format", "TEXT NOT NULL DEFAULT 'round-robin'"},
	{"final_run", "rounds", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "top", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "advance", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "then_format", "TEXT NOT NULL DEFAULT ''"},
	{"final_run", "budget", "INTEGER NOT NULL DEFAULT 0"},
	// A final's player's place in the order it was started with (its
	// seed, from 1): a resumed final plays them in that order, whatever
	// the ladder, the teams' names or their state say since. 0: a final
	// started before seeds were kept.
	{"final_players", "seed", "INTEGER NOT NULL DEFAULT 0"},
	{"ladder_pairs", "opening", "TEXT NOT NULL DEFAULT ''"},
	{"ladder_pairs", "played", "INTEGER NOT NULL DEFAULT 0"},
	{"ladder_pairs", "repeats", "INTEGER NOT NULL DEFAULT 0"},
	// A rating point's number among its team's, from 1, and its stride:
	// the largest power of two that divides n-1, or 1<<62 for the first
	// point and each of a new submission (a plot of one point in every
	// 2^k keeps those of a stride of 2^k or more). Set by
	// rating_history_numbered.
	{"rating_history", "n", "INTEGER NOT NULL DEFAULT 0"},
	{"rating_history", "stride", "INTEGER NOT NULL DEFAULT 0"},
}

// indexes need the added columns.
const indexes = `
CREATE UNIQUE INDEX IF NOT EXISTS teams_bot ON teams(lower(bot_name));
CREATE INDEX IF NOT EXISTS games_course ON games(white_submission, black_submission, course);
CREATE INDEX IF NOT EXISTS games_black_submission ON games(black_submission, id);
CREATE INDEX IF NOT EXISTS games_white_kind ON games(white_team, kind);
CREATE INDEX IF NOT EXISTS games_black_kind ON games(black_team, kind);
CREATE INDEX IF NOT EXISTS scrimmages_rival ON scrimmages(rival_team, id);
CREATE INDEX IF NOT EXISTS disputes_game ON disputes(game_id, id);
CREATE INDEX IF NOT EXISTS ladder_pairs_a ON ladder_pairs(a_team, state, id);
CREATE INDEX IF NOT EXISTS ladder_pairs_b ON ladder_pairs(b_team, state, id);
CREATE INDEX IF NOT EXISTS rating_history_stride ON rating_history(team_id, stride, n, submission, rating, deviation);
CREATE TRIGGER IF NOT EXISTS rating_history_numbered AFTER INSERT ON rating_history BEGIN
	UPDATE rating_history SET
		n = COALESCE((SELECT n FROM rating_history WHERE team_id = NEW.team_id AND pair < NEW.pair ORDER BY pair DESC LIMIT 1), 0) + 1,
		stride = COALESCE((SELECT CASE WHEN submission = NEW.submission THEN n & -n ELSE 1 << 62 END
			FROM rating_history WHERE team_id = NEW.team_id AND pair < NEW.pair ORDER BY pair DESC LIMIT 1), 1 << 62)
	WHERE team_id = NEW.team_id AND pair = NEW.pair;
END;
CREATE INDEX IF NOT EXISTS submissions_failed ON submissions(finished) WHERE state IN ('failed', 'error') AND admitted = '';
CREATE TABLE IF NOT EXISTS teams_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO teams_version (id, n) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS teams_added AFTER INSERT ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS teams_renamed AFTER UPDATE OF name, bot_name ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS teams_removed AFTER DELETE ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TABLE IF NOT EXISTS rating_plots (team_id INTEGER PRIMARY KEY REFERENCES teams(id), most INTEGER NOT NULL, points BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS team_games (team INTEGER NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL, changes INTEGER NOT NULL,
	PRIMARY KEY (team, kind)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS team_games_added AFTER INSERT ON games BEGIN
	INSERT INTO team_games (team, kind, n, changes) SELECT t, NEW.kind, 1, 1 FROM (SELECT NEW.white_team AS t UNION ALL SELECT NEW.black_team) WHERE t IS NOT NULL
	ON CONFLICT (team, kind) DO UPDATE SET n = n + 1, changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS team_games_removed AFTER DELETE ON games BEGIN
	UPDATE team_games SET n = n - 1, changes = changes + 1 WHERE kind = OLD.kind AND team IN (OLD.white_team, OLD.black_team);
END;
CREATE TRIGGER IF NOT EXISTS team_games_rated AFTER UPDATE OF rated ON games BEGIN
	UPDATE team_games SET changes = changes + 1 WHERE kind = NEW.kind AND team IN (NEW.white_team, NEW.black_team);
END;
`

// ratingHistoryBackfill numbers the rating points an event kept before
// they were numbered (rating_history_numbered numbers each one added).
const ratingHistoryBackfill = `UPDATE rating_history SET n = o.n, stride = o.stride FROM
	(SELECT t, p, n, CASE WHEN submission = prev THEN (n - 1) & -(n - 1) ELSE 1 << 62 END AS stride FROM
		(SELECT team_id AS t, pair AS p, submission, row_number() OVER w AS n, lag(submission) OVER w AS prev
		FROM rating_history WINDOW w AS (PARTITION BY team_id ORDER BY pair))) AS o
	WHERE team_id = o.t AND pair = o.p`

// teamGamesBackfill counts the games an event kept before team_games was.
const teamGamesBackfill = `INSERT INTO team_games (team, kind, n, changes)
	SELECT team, kind, count(*), 0 FROM (SELECT white_team AS team, kind FROM games WHERE white_team IS NOT NULL
	UNION ALL SELECT black_team, kind FROM games WHERE black_team IS NOT NULL) GROUP BY team, kind`

// eventLogSchema1 is eventlog.Schema as migration 1 made it: the final
// log's tables, in the event's database.
const eventLogSchema1 = `
CREATE TABLE IF NOT EXISTS log_entries (n INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log_hashes (i INTEGER PRIMARY KEY, hash BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log_checkpoints (size INTEGER PRIMARY KEY, at TEXT NOT NULL, note BLOB NOT NULL);
`

// migrate1 makes or completes the layout of migration 1.
func migrate1(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, schema+eventLogSchema1); err != nil {
		return err
	}
	added := map[string]bool{}
	for _, c := range columns {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column+` `+c.def); err != nil {
				return fmt.Errorf("add %s.%s: %w", c.table, c.column, err)
			}
			added[c.table+"."+c.column] = true
		}
	}
	// An event kept before every rerun of a dispute was kept holds its
	// last one in the dispute's row.
	if _, err := q.ExecContext(ctx, `INSERT INTO dispute_reruns (dispute_id, ply, text, at)
		SELECT id, rerun_ply, rerun, filed FROM disputes d WHERE rerun != '' AND NOT EXISTS (SELECT 1 FROM dispute_reruns r WHERE r.dispute_id = d.id)`); err != nil {
		return fmt.Errorf("keep the disputes' reruns: %w", err)
	}
	var counted, plotted int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'team_games'`).Scan(&counted); err != nil {
		return err
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'rating_plots'`).Scan(&plotted); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, indexes); err != nil {
		return err
	}
	if counted == 0 {
		if _, err := q.ExecContext(ctx, teamGamesBackfill); err != nil {
			return fmt.Errorf("count each team's games: %w", err)
		}
	}
	if added["rating_history.n"] || added["rating_history.stride"] {
		if _, err := q.ExecContext(ctx, ratingHistoryBackfill); err != nil {
			return fmt.Errorf("number each team's rating points: %w", err)
		}
	}
	if plotted == 0 {
		if err := keepRatingPlots(ctx, q); err != nil {
			return fmt.Errorf("keep each team's rating plot: %w", err)
		}
	}
	return giveBotNames(ctx, q)
}

// migrate2 keeps with each rerun of a disputed turn whose turn it was (its
// side) and what anyone else may read of it (public: the verdicts, moves
// and times without the side's own output). The side of a rerun kept
// before is read from its text's first line ("ply 7, black (...)"); its
// public text is left empty: only the organizer and that side's team read
// it.
func migrate2(ctx context.Context, q querier) error {
	for _, column := range []string{"side", "public"} {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('dispute_reruns') WHERE name = ?`, column).Scan(&n); err != nil {
			return err
		}
		if n > 0 { // a database made again from an older one's rows
			continue
		}
		if _, err := q.ExecContext(ctx, `ALTER TABLE dispute_reruns ADD COLUMN `+column+` TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	_, err := q.ExecContext(ctx, `UPDATE dispute_reruns SET side = CASE
	WHEN text LIKE 'ply %, white (%' OR text LIKE '%' || char(10) || 'ply %, white (%' THEN 'white'
	WHEN text LIKE 'ply %, black (%' OR text LIKE '%' || char(10) || 'ply %, black (%' THEN 'black'
	ELSE '' END WHERE side = ''`)
	return err
}

// migrate3 keeps how long each game held its place among those played at
// once (games.slot_ms: the final's estimate takes it; 0 for the games
// recorded before), and the size of the final log's last checkpoint each
// of the event's witnesses cosigned (log_witnesses).
func migrate3(ctx context.Context, q querier) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('games') WHERE name = 'slot_ms'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := q.ExecContext(ctx, `ALTER TABLE games ADD COLUMN slot_ms REAL NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	_, err := q.ExecContext(ctx, eventLogWitnesses)
	return err
}

// migrate4 keeps, beside the tries of a tournament's games played again
// because the host was too busy (host_replays.n), those played again
// because their sandbox failed (host_replays.faults: a Pod lost, a
// container gone; 0 for what was recorded before).
func migrate4(ctx context.Context, q querier) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('host_replays') WHERE name = 'faults'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := q.ExecContext(ctx, `ALTER TABLE host_replays ADD COLUMN faults INTEGER NOT NULL DEFAULT 0`)
	return err
}

// eventLogWitnesses is the final log's witnesses' table as migration 3
// made it (eventlog.Schema's).
const eventLogWitnesses = `CREATE TABLE IF NOT EXISTS log_witnesses (url TEXT PRIMARY KEY, size INTEGER NOT NULL);
`
