package event

import (
	"context"
	"database/sql"
	"time"
)

// Organizer actions, as the audit log names them.
const (
	ActionClose    = "close"
	ActionReopen   = "reopen"
	ActionAdmit    = "admit"
	ActionWithdraw = "withdraw admission"
	ActionRename   = "rename"
	ActionDisable  = "disable"
	ActionEnable   = "enable"
	ActionFreeze   = "freeze"
	ActionReveal   = "reveal"
	ActionFinal    = "final"
	ActionRerun    = "rerun"
	ActionAnswer   = "answer"
	ActionReval    = "revalidate"
	ActionReadmit  = "readmit"
)

// AuditEntry is one organizer action: when, what, and on what.
type AuditEntry struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	Detail string    `json:"detail"`
}

// act runs fn in one transaction with the audit row of action (fn returns
// its detail): the change and its record are one. Once committed, the
// action is also in the server's log.
func (s *Store) act(ctx context.Context, action string, fn func(tx *sql.Tx) (detail string, err error)) error {
	defer s.timed(time.Now())
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	detail, err := fn(tx)
	if err != nil {
		return err
	}
	if err := auditIn(ctx, tx, action, detail); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.logAction(action, detail)
	return nil
}

func auditIn(ctx context.Context, tx *sql.Tx, action, detail string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO audit (at, action, detail) VALUES (?, ?, ?)`, now(), action, detail)
	return err
}

// logAction tells the server's log of an organizer's action.
func (s *Store) logAction(action, detail string) {
	if s.Log != nil {
		s.Log.Info("organizer: "+action, "detail", detail)
	}
}

// Audit lists the organizer's actions, newest first, at most n.
func (s *Store) Audit(ctx context.Context, n int) ([]AuditEntry, error) {
	return readAll(ctx, s, func(row interface{ Scan(...any) error }) (AuditEntry, error) {
		var e AuditEntry
		var at string
		err := row.Scan(&e.ID, &at, &e.Action, &e.Detail)
		e.At = parseTime(at)
		return e, err
	}, `SELECT id, at, action, detail FROM audit ORDER BY id DESC LIMIT ?`, n)
}
