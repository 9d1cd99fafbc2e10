// Package api holds the wire types of the event server's JSON API: a
// submission as the API returns it, the states it goes through, and the
// body of every error ({"error": {"code": ..., "message": ...}}) with the
// helper that writes it. The server writes them and the arena submit
// client reads them, so each is defined here once.
//
// It uses the standard library only and must never import a package of
// this module or anything else: the client, built on it alone, stays small
// and free of the server's dependencies.
package api

import (
	"encoding/json"
	"net/http"
	"time"
)

// State is where a submission's validation stands.
type State string

// Submission states.
const (
	Queued     State = "queued"
	Building   State = "building"
	Validating State = "validating"
	Passed     State = "passed"
	Failed     State = "failed"
	// Errored is a validation the host could not finish (the engine went
	// away): not the team's fault; the organizer validates it again.
	Errored State = "error"
)

// Done says whether a submission in state s has its validation behind it.
func (s State) Done() bool { return s == Passed || s == Failed || s == Errored }

// Submission is one upload of a team and where its validation stands.
type Submission struct {
	ID       int64     `json:"id"`
	Team     int64     `json:"team"`
	SHA256   string    `json:"sha256"`
	Size     int64     `json:"size"`
	Filename string    `json:"filename"`
	Uploaded time.Time `json:"uploaded"`
	State    State     `json:"state"`
	// Summary is the validation's outcome in one line: the first failure.
	Summary  string    `json:"summary,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Active is set on the submission that plays for its team.
	Active bool `json:"active"`
	// Admitted is the organizer's reason for letting a submission that
	// failed its validation play as if it had passed ("" if it was not).
	Admitted   string    `json:"admitted,omitempty"`
	AdmittedAt time.Time `json:"admittedAt,omitzero"`
	// CannotPlay is why a failed submission has no program that could
	// play (validate.Report.CannotPlay): no admission lets it play. ""
	// for one that could, and for one validated before it was recorded.
	CannotPlay string `json:"cannotPlay,omitempty"`
}

// Plays says whether the submission may play for its team: it passed its
// validation, or the organizer admitted it.
func (sub Submission) Plays() bool {
	return sub.State == Passed || sub.State == Failed && sub.Admitted != ""
}

// Error is an answer of the API that is not a success: its HTTP status
// and, from its body, a code a program can test and a sentence for a
// person.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Message + " (" + e.Code + ")"
}

// ErrorBody is the JSON of every error the API answers.
type ErrorBody struct {
	Error Error `json:"error"`
}

// WriteError answers an error of the API: status, and code and message
// as an ErrorBody, indented as every answer of the API is.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	body, err := json.MarshalIndent(ErrorBody{Error{Code: code, Message: message}}, "", "  ")
	if err != nil {
		// Two strings always marshal.
		panic(err)
	}
	WriteJSONHeader(w, status)
	// The client is gone if this fails.
	_, _ = w.Write(append(body, '\n'))
}

// WriteJSONHeader sends the header of an answer of the API: JSON, kept by
// nobody on the way, and its status.
func WriteJSONHeader(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(status)
}
