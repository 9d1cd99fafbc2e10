package event

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// RatingPlotPoints is about how many points a team's rating plot draws at
// most (about one every three pixels): RatingPlot is RatingHistory thinned
// to it.
const RatingPlotPoints = 200

// RatingPlot is RatingHistory(ctx, team, RatingPlotPoints), as kept when
// the team's last pair was recorded: one row, where the history is a row
// a point, and a team's page reads it on every view. A plot not kept (an
// event from before plots were, a team with no rated pair) or kept for
// another number of points, or unreadable, is read from the history.
func (s *Store) RatingPlot(ctx context.Context, team int64) ([]RatingPoint, error) {
	var most int
	var kept []byte
	err := s.readRow(ctx, `SELECT most, points FROM rating_plots WHERE team_id = ?`, team).Scan(&most, &kept)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err == nil && most == RatingPlotPoints {
		if points, derr := decodeRatingPoints(kept); derr == nil {
			return points, nil
		} else if s.Log != nil {
			s.Log.Warn("a kept rating plot is unreadable: read from the history", "team", team, "err", derr)
		}
	}
	return s.RatingHistory(ctx, team, RatingPlotPoints)
}

// keepRatingPlot keeps team's RatingPlot as its history stands in tx.
func keepRatingPlot(ctx context.Context, tx querier, team int64) error {
	points, err := ratingHistory(ctx, tx.QueryContext, team, RatingPlotPoints)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO rating_plots (team_id, most, points) VALUES (?, ?, ?)
		ON CONFLICT (team_id) DO UPDATE SET most = excluded.most, points = excluded.points`, team, RatingPlotPoints, encodeRatingPoints(points))
	return err
}

// keepRatingPlots keeps the plot of every team with a rating history.
func keepRatingPlots(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT team_id FROM rating_history`)
	if err != nil {
		return err
	}
	teams, err := scanRows(rows, func(row interface{ Scan(...any) error }) (team int64, err error) {
		err = row.Scan(&team)
		return team, err
	})
	if err != nil {
		return err
	}
	for _, team := range teams {
		if err := keepRatingPlot(ctx, q, team); err != nil {
			return fmt.Errorf("team %d: %w", team, err)
		}
	}
	return nil
}

// A kept plot is its points one after another, each its pair and
// submission as varints, then its rating and deviation as IEEE 754 bits,
// little-endian.
func encodeRatingPoints(points []RatingPoint) []byte {
	out := make([]byte, 0, len(points)*24)
	for _, p := range points {
		out = binary.AppendUvarint(out, uint64(p.Pair))
		out = binary.AppendVarint(out, p.Submission)
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(p.Rating))
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(p.Deviation))
	}
	return out
}

func decodeRatingPoints(b []byte) ([]RatingPoint, error) {
	var out []RatingPoint
	for len(b) > 0 {
		pair, n := binary.Uvarint(b)
		if n <= 0 || pair > math.MaxInt32 {
			return nil, fmt.Errorf("point %d: a bad pair number", len(out)+1)
		}
		b = b[n:]
		sub, n := binary.Varint(b)
		if n <= 0 {
			return nil, fmt.Errorf("point %d: a bad submission", len(out)+1)
		}
		b = b[n:]
		if len(b) < 16 {
			return nil, fmt.Errorf("point %d: cut short", len(out)+1)
		}
		out = append(out, RatingPoint{Pair: int(pair), Submission: sub,
			Rating: math.Float64frombits(binary.LittleEndian.Uint64(b)), Deviation: math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))})
		b = b[16:]
	}
	return out, nil
}
