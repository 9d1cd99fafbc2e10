// Package runner plays a tournament: every game its schedule pairs, run
// concurrently in the sandbox on this machine or handed to workers through
// harness/distrib (a coordinator and its workers), each result checked and
// recorded in the tournament's store as it happens, so that an interrupted
// run resumes where it stopped. A sample of each worker's results is played
// again here and compared turn by turn.
//
// A game aborted by the host or sandbox is retried a bounded number of times
// and otherwise recorded unplayed; it is never scored as anybody's loss. The
// runner must never decide a pairing or a place itself: those are
// harness/tournament's.
package runner
