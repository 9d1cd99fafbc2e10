// Package services is what an event does with its stored state
// (harness/event): the Validator that takes each upload through the
// validate pipeline, the Player that plays scrimmages and the rated ladder,
// the final (NewFinal describes it once for arena event final and the
// server; PrepareFinal, FinalPlan.Play and FinalRunner play it), the
// Rerunner of a disputed turn and Judge, a dispute's verdict, and Workers,
// the volunteers' machines that play the event's games, with their Tally.
//
// Every game it plays goes through the tournament runner (harness/runner),
// every rerun through harness/replay; it must never write the event's
// database but through event.Store, nor play a game any other way.
package services
