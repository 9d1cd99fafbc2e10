package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
)

// The final's log is served as C2SP tlog-tiles name it, under /log/: its
// latest checkpoint, during a freeze too (it commits to the entries logged
// since without telling what they say: a team keeps it, and checks after
// the reveal that the log extends it), and the tiles of the tree whose
// entries may be read now (during a freeze, the last one signed before it:
// a tile past it is withheld until the reveal). Anyone may read it, as
// anyone may read the standings; a static copy serves the same paths
// (arena event publish).

func (s *Server) logCheckpoint(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	signed, _, err := s.Store.FinalLogCheckpoint(r.Context())
	if err != nil {
		return err
	}
	if signed == nil {
		return &httpError{http.StatusNotFound, "not_found", "the final's log has no checkpoint yet: it starts with the final"}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, err = w.Write(signed)
	return err
}

func (s *Server) logTile(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	data, err := s.Store.FinalLogTile(r.Context(), "tile/"+r.PathValue("path"))
	if errors.Is(err, event.ErrWithheld) {
		return &httpError{http.StatusNotFound, "not_found", "this tile holds entries logged during the scoreboard's freeze: it is served once the scoreboard is revealed (keep the checkpoint now, and check the log extends it then: arena verify --since)"}
	}
	if errors.Is(err, eventlog.ErrNoTile) || isBadTilePath(err) {
		return &httpError{http.StatusNotFound, "not_found", "no such tile in the log shown now"}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	// A whole tile never changes; a partial one is replaced by a wider one.
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, err = w.Write(data)
	return err
}

// logged says whether the event's log takes game g: a final's game, or a
// ladder game when the event logs them.
func (s *Server) logged(g event.Game) bool {
	return g.Kind == event.FinalGame || g.Kind == event.LadderGame && s.Config.Log.Ladder
}

// isBadTilePath says whether err is a path that names no tile.
func isBadTilePath(err error) bool {
	var bad *eventlog.BadPathError
	return errors.As(err, &bad)
}

// gameProof is a game's inclusion proof in the event's log (a final's
// game, or a ladder game when the event logs them), for a team that played
// it (or the organizer), as a file to keep: arena verify --key KEY --proof
// FILE checks it offline.
func (s *Server) gameProof(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	if !s.logged(g) {
		return &httpError{http.StatusNotFound, "not_found", "this game is not in the event's log: it logs the final's games, and the ladder's only when the event says so ([log] ladder)"}
	}
	proof, ok, err := s.Store.LogProofOf(r.Context(), g.Dir)
	if err != nil {
		return err
	}
	if !ok {
		return &httpError{http.StatusNotFound, "not_found", "this game is not in the final's log as it is shown now (the scoreboard is frozen, or it is being logged): ask again later"}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="game-`+strconv.FormatInt(g.ID, 10)+`.tlog-proof"`)
	_, err = w.Write(proof)
	return err
}
