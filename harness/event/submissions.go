package event

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/api"
)

// Submission is one upload of a team and where its validation stands, as
// the API answers it.
type Submission = api.Submission

// playsSQL is Plays in SQL, for the submissions aliased t.
func playsSQL(t string) string {
	return fmt.Sprintf("(%[1]s.state = 'passed' OR (%[1]s.state = 'failed' AND %[1]s.admitted != ''))", t)
}

// Path is where the upload's bytes are: by content hash, under the name it
// was uploaded with (the name says whether it is a ZIP, an executable or
// which source language).
func (s *Store) Path(sub Submission) string {
	return filepath.Join(s.Dir, UploadsDir, sub.SHA256, sub.Filename)
}

// ValidationDir is where a submission's validation keeps its report,
// extracted files and matches.
func (s *Store) ValidationDir(id int64) string {
	return filepath.Join(s.Dir, ValidationsDir, fmt.Sprint(id))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._+-]`)

// SafeFilename is an uploaded file's name as it is stored: its base name,
// characters other than letters, digits and ._+- replaced, no leading dot,
// at most 100 bytes with its extension kept; "submission" when nothing is
// left.
func SafeFilename(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimLeft(unsafeName.ReplaceAllString(name, "_"), ".")
	if len(name) > 100 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = name[:100-len(ext)] + ext
	}
	if name == "" || name == "_" {
		return "submission"
	}
	return name
}

// QuotaError is an upload refused by a quota or the event's hours.
type QuotaError struct{ Msg string }

func (e *QuotaError) Error() string { return e.Msg }

// UploadError is an upload the team's client did not send whole: cut
// short, or empty. Nothing of it is stored.
type UploadError struct {
	Code string // "incomplete" or "empty"
	Msg  string
	Err  error // what the read failed with, if it did
}

func (e *UploadError) Error() string { return e.Msg }
func (e *UploadError) Unwrap() error { return e.Err }

// readFailure marks an error of the reader an upload came from (not of the
// disk it goes to).
type readFailure struct{ err error }

func (e readFailure) Error() string { return e.err.Error() }
func (e readFailure) Unwrap() error { return e.err }

// bodyReader tells its reader's errors from the writer's.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = readFailure{err}
	}
	return n, err
}

// TooLargeError is an upload over the size cap.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the upload is larger than the event's upload_size of %d bytes", e.Max)
}

// AddSubmission stores an upload of team read from r (at most max bytes)
// and queues its validation. It returns only once the bytes are on disk
// (synced, under their hash) and the submission is in the database, so an
// acknowledged upload survives a crash. cfg's quotas and hours are checked
// first.
func (s *Store) AddSubmission(ctx context.Context, cfg Config, team int64, filename string, r io.Reader) (Submission, error) {
	t := time.Now()
	if !cfg.Open(t) {
		return Submission{}, &QuotaError{closedMessage(cfg, t)}
	}
	if at, closed, err := s.Closed(ctx); err != nil {
		return Submission{}, err
	} else if closed {
		return Submission{}, &QuotaError{"uploads closed at " + at.Format(time.RFC3339) + ": the final plays the pinned submissions"}
	}
	if err := s.checkQuota(ctx, cfg, team, t); err != nil {
		return Submission{}, err
	}
	max := int64(cfg.Limits.UploadSize)
	tmp, err := os.CreateTemp(filepath.Join(s.Dir, tmpDir), "upload-")
	if err != nil {
		return Submission{}, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(bodyReader{r}, max+1))
	var rf readFailure
	if errors.As(err, &rf) {
		// The client's fault, or its network's: nothing is kept.
		err = &UploadError{"incomplete", "the upload was cut short (" + rf.err.Error() + "): nothing was stored; send it again", rf.err}
	}
	if err == nil && n > max {
		err = &TooLargeError{Max: max}
	}
	if err == nil && n == 0 {
		err = &UploadError{Code: "empty", Msg: "the upload is empty: choose a file with your bot in it"}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Submission{}, err
	}
	sub := Submission{Team: team, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n, Filename: SafeFilename(filename),
		Uploaded: t.UTC(), State: Queued}
	final := s.Path(sub)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return Submission{}, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return Submission{}, err
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return Submission{}, err
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO submissions (team_id, sha256, size, filename, uploaded, state) VALUES (?, ?, ?, ?, ?, ?)`,
		team, sub.SHA256, sub.Size, sub.Filename, sub.Uploaded.Format(time.RFC3339Nano), Queued)
	if err != nil {
		return Submission{}, err
	}
	sub.ID, err = res.LastInsertId()
	return sub, err
}

func closedMessage(cfg Config, t time.Time) string {
	if !cfg.Opens.IsZero() && t.Before(cfg.Opens.Time) {
		return "uploads open at " + cfg.Opens.Format(time.RFC3339)
	}
	return "uploads closed at " + cfg.Closes.Format(time.RFC3339)
}

func (s *Store) checkQuota(ctx context.Context, cfg Config, team int64, t time.Time) error {
	var hour, pending int
	err := s.readRow(ctx, `SELECT
		(SELECT count(*) FROM submissions WHERE team_id = ?1 AND uploaded > ?2),
		(SELECT count(*) FROM submissions WHERE team_id = ?1 AND state IN (?3, ?4, ?5))`,
		team, t.Add(-time.Hour).UTC().Format(time.RFC3339Nano), Queued, Building, Validating).Scan(&hour, &pending)
	if err != nil {
		return err
	}
	switch {
	case hour >= cfg.Quotas.UploadsPerHour:
		return &QuotaError{fmt.Sprintf("%d uploads in the last hour: the event takes %d an hour; try again later", hour, cfg.Quotas.UploadsPerHour)}
	case pending >= cfg.Quotas.PendingValidations:
		return &QuotaError{fmt.Sprintf("%d of your uploads wait for their validation: the event takes %d at once; wait for one to finish", pending, cfg.Quotas.PendingValidations)}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

const submissionColumns = `s.id, s.team_id, s.sha256, s.size, s.filename, s.uploaded, s.state, s.summary, s.started, s.finished,
	s.admitted, s.admitted_at, s.cannot_play`

// activeID is the SQL for the id of team t's active submission: the one it
// made active if that one plays, else the newest that plays.
var activeID = `COALESCE(
	(SELECT p.id FROM submissions p JOIN teams pt ON pt.pinned = p.id WHERE pt.id = %[1]s AND ` + playsSQL("p") + `),
	(SELECT max(n.id) FROM submissions n WHERE n.team_id = %[1]s AND ` + playsSQL("n") + `))`

func scanSubmission(row interface{ Scan(...any) error }, active *sql.NullInt64) (Submission, error) {
	var sub Submission
	var up, st, fin, adm string
	dest := []any{&sub.ID, &sub.Team, &sub.SHA256, &sub.Size, &sub.Filename, &up, &sub.State, &sub.Summary, &st, &fin, &sub.Admitted, &adm, &sub.CannotPlay}
	if active != nil {
		dest = append(dest, active)
	}
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return sub, ErrNotFound
	}
	sub.Uploaded, sub.Started, sub.Finished, sub.AdmittedAt = parseTime(up), parseTime(st), parseTime(fin), parseTime(adm)
	if active != nil {
		sub.Active = active.Valid && active.Int64 == sub.ID
	}
	return sub, err
}

// Submission is the submission with that id.
func (s *Store) Submission(ctx context.Context, id int64) (Submission, error) {
	var active sql.NullInt64
	sub, err := scanSubmission(s.readRow(ctx, `SELECT `+submissionColumns+`, `+fmt.Sprintf(activeID, "s.team_id")+
		` FROM submissions s WHERE s.id = ?`, id), &active)
	return sub, err
}

// Submissions lists a team's submissions, newest first.
func (s *Store) Submissions(ctx context.Context, team int64) ([]Submission, error) {
	rows, err := s.read(ctx, `SELECT `+submissionColumns+`, `+fmt.Sprintf(activeID, "?1")+
		` FROM submissions s WHERE s.team_id = ?1 ORDER BY s.id DESC`, team)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var active sql.NullInt64
		sub, err := scanSubmission(rows, &active)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// Queue lists the submissions waiting for or in validation, oldest first.
func (s *Store) Queue(ctx context.Context) ([]Submission, error) {
	return s.listSubmissions(ctx, `WHERE s.state IN ('queued', 'building', 'validating') ORDER BY s.id`)
}

// RecentFailures lists the last n submissions that failed or errored and
// still matter: not admitted, and not followed by a later upload of the
// team that plays.
func (s *Store) RecentFailures(ctx context.Context, n int) ([]Submission, error) {
	return s.listSubmissions(ctx, recentFailures, n)
}

// recentFailures picks RecentFailures' submissions, newest first, from
// the failures' own index (submissions_failed, named: the planner would
// pick the states' and sort every failure): the page of a thousand teams
// reads the newest failures until it has enough, not every one.
var recentFailures = `INDEXED BY submissions_failed WHERE s.state IN ('failed', 'error') AND s.admitted = ''
		AND NOT EXISTS (SELECT 1 FROM submissions n WHERE n.team_id = s.team_id AND n.id > s.id AND ` + playsSQL("n") + `)
		ORDER BY s.finished DESC LIMIT ?`

func (s *Store) listSubmissions(ctx context.Context, where string, args ...any) ([]Submission, error) {
	rows, err := s.read(ctx, `SELECT `+submissionColumns+` FROM submissions s `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		sub, err := scanSubmission(rows, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// QueueAhead is how many submissions wait ahead of queued submission id
// for their validation (validations are taken in upload order).
func (s *Store) QueueAhead(ctx context.Context, id int64) (int, error) {
	var n int
	err := s.readRow(ctx, `SELECT count(*) FROM submissions WHERE state = ? AND id < ?`, Queued, id).Scan(&n)
	return n, err
}

// Pin makes a passed submission of its team the active one.
func (s *Store) Pin(ctx context.Context, team, id int64) error {
	sub, err := s.Submission(ctx, id)
	if err != nil {
		return err
	}
	if sub.Team != team {
		return ErrNotFound
	}
	if !sub.Plays() {
		return fmt.Errorf("submission %d has not passed its validation (%s): only a passed one, or one the organizer admitted, can play", id, sub.State)
	}
	_, err = s.w.ExecContext(ctx, `UPDATE teams SET pinned = ? WHERE id = ?`, id, team)
	return err
}

// Requeue puts every validation that was under way when the server stopped
// back in the queue, and returns how many.
func (s *Store) Requeue(ctx context.Context) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE submissions SET state = ?, started = '' WHERE state IN (?, ?)`, Queued, Building, Validating)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Revalidate queues a finished submission's validation again.
func (s *Store) Revalidate(ctx context.Context, id int64) error {
	return s.act(ctx, ActionReval, func(tx *sql.Tx) (string, error) {
		var team, was string
		err := tx.QueryRowContext(ctx, `SELECT t.name, s.state FROM submissions s JOIN teams t ON t.id = s.team_id WHERE s.id = ?`, id).Scan(&team, &was)
		if err == nil {
			var res sql.Result
			res, err = tx.ExecContext(ctx, `UPDATE submissions SET state = ?, summary = '', started = '', finished = '' WHERE id = ? AND state IN (?, ?, ?)`,
				Queued, id, Passed, Failed, Errored)
			if err == nil {
				if n, _ := res.RowsAffected(); n == 0 {
					err = sql.ErrNoRows
				}
			}
		}
		if errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("submission %d is not there or is already being validated", id)
		}
		return fmt.Sprintf("%s's submission #%d (it was %s)", team, id, was), err
	})
}

// Claim takes the oldest queued submission for validation (its state
// becomes validating, or building once a build starts), or ErrNotFound.
func (s *Store) Claim(ctx context.Context) (Submission, error) {
	var id int64
	err := s.w.QueryRowContext(ctx, `UPDATE submissions SET state = ?, started = ? WHERE id =
		(SELECT id FROM submissions WHERE state = ? ORDER BY id LIMIT 1) RETURNING id`, Validating, now(), Queued).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Submission{}, ErrNotFound
	}
	if err != nil {
		return Submission{}, err
	}
	return s.Submission(ctx, id)
}

// SetState records a submission's progress; a final state records its
// summary and finishing time.
func (s *Store) SetState(ctx context.Context, id int64, state api.State, summary string) error {
	return s.SetValidated(ctx, id, state, summary, "")
}

// SetValidated is SetState that also records why a failed submission
// cannot play (validate.Report.CannotPlay; "" if it could).
func (s *Store) SetValidated(ctx context.Context, id int64, state api.State, summary, cannotPlay string) error {
	fin := ""
	if Done(state) {
		fin = now()
	}
	_, err := s.w.ExecContext(ctx, `UPDATE submissions SET state = ?, summary = ?, finished = ?, cannot_play = ? WHERE id = ?`,
		string(state), summary, fin, cannotPlay, id)
	return err
}

// NewestFailed says whether a team's newest upload failed its validation
// (the team page keeps a badge until a later one passes).
func (s *Store) NewestFailed(ctx context.Context, team int64) (Submission, bool, error) {
	subs, err := s.listSubmissions(ctx, `WHERE s.team_id = ? ORDER BY s.id DESC LIMIT 1`, team)
	if err != nil || len(subs) == 0 {
		return Submission{}, false, err
	}
	return subs[0], subs[0].State == Failed, nil
}

// MaxAdmission is the longest reason an admission takes.
const MaxAdmission = 2000

// Admit lets a submission that failed its validation play as if it had
// passed, for the organizer's reason (which the team sees). A submission
// with nothing that could play (its validation recorded why, SetValidated's
// cannotPlay: nothing to run, a build or syntax error) cannot be admitted.
func (s *Store) Admit(ctx context.Context, id int64, reason string) (Submission, error) {
	reason, err := cleanText("reason", reason, MaxAdmission)
	if err != nil {
		return Submission{}, err
	}
	sub, err := s.Submission(ctx, id)
	if err != nil {
		return Submission{}, err
	}
	switch sub.State {
	case Passed:
		return Submission{}, &RefusedError{fmt.Sprintf("submission %d passed its validation: it plays without an admission", id)}
	case Failed:
	case Errored:
		return Submission{}, &RefusedError{fmt.Sprintf("submission %d could not be validated (the host failed, not the team): validate it again rather than admit it", id)}
	default:
		return Submission{}, &RefusedError{fmt.Sprintf("submission %d is %s: wait for its validation to end", id, sub.State)}
	}
	if why := sub.CannotPlay; why != "" {
		return Submission{}, &RefusedError{fmt.Sprintf("submission %d has nothing that could play (%s): admitted, it still could not play", id, why)}
	}
	team, err := s.Team(ctx, sub.Team)
	if err != nil {
		return Submission{}, err
	}
	err = s.act(ctx, ActionAdmit, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE submissions SET admitted = ?, admitted_at = ? WHERE id = ? AND state = ?`, reason, now(), id, Failed); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s's submission #%d (failed: %s): %s", team.Name, id, sub.Summary, reason), nil
	})
	if err != nil {
		return Submission{}, err
	}
	return s.Submission(ctx, id)
}

// Withdraw takes an admission back: the submission plays no more (unless
// uploads are closed and it was pinned: the final plays what was pinned).
func (s *Store) Withdraw(ctx context.Context, id int64) (Submission, error) {
	sub, err := s.Submission(ctx, id)
	if err != nil {
		return Submission{}, err
	}
	if sub.Admitted == "" {
		return Submission{}, &RefusedError{fmt.Sprintf("submission %d was not admitted", id)}
	}
	team, err := s.Team(ctx, sub.Team)
	if err != nil {
		return Submission{}, err
	}
	err = s.act(ctx, ActionWithdraw, func(tx *sql.Tx) (string, error) {
		_, err := tx.ExecContext(ctx, `UPDATE submissions SET admitted = '', admitted_at = '' WHERE id = ?`, id)
		return fmt.Sprintf("%s's submission #%d (it was admitted: %s)", team.Name, id, sub.Admitted), err
	})
	if err != nil {
		return Submission{}, err
	}
	return s.Submission(ctx, id)
}
