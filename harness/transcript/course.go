package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Course is a game move for move: the SHA-256 (hex) of its game, its rule
// options (an opening among them), each turn's side, phase, verdict and
// the move played, and its result. Two games of one course are the same
// game, whatever the times, the seed or the bots' output: a ladder counts
// such a repeat once. A transcript is read whole and chain-checked first.
func Course(lines []Line) (string, error) {
	if err := VerifyChain(lines); err != nil {
		return "", err
	}
	var h Header
	if err := lines[0].Decode(&h); err != nil {
		return "", fmt.Errorf("header: %w", err)
	}
	var f Footer
	if err := lines[len(lines)-1].Decode(&f); err != nil {
		return "", fmt.Errorf("footer: %w", err)
	}
	if f.Result.Winner == "" {
		return "", errors.New("the footer has no result")
	}
	sum := sha256.New()
	enc := json.NewEncoder(sum)
	keys := make([]string, 0, len(h.Rules))
	for k := range h.Rules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rules := make([][2]string, 0, len(keys))
	for _, k := range keys {
		rules = append(rules, [2]string{k, h.Rules[k]})
	}
	if err := enc.Encode([]any{h.Game, rules}); err != nil {
		return "", err
	}
	for _, l := range lines[1 : len(lines)-1] {
		var t Turn
		if err := l.Decode(&t); err != nil {
			return "", fmt.Errorf("turn %d: %w", l.Seq, err)
		}
		move := t.Played
		if move == "" {
			move = t.Move
		}
		if err := enc.Encode([]any{t.Side, t.Phase, t.SetupStep, t.Verdict, move, t.Substituted}); err != nil {
			return "", err
		}
	}
	if err := enc.Encode([]any{f.Result.Winner, f.Result.Reason, f.Result.Points}); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}
