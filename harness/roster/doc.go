// Package roster is a tournament's workers as files in its workers
// directory: who is enrolled (each worker's public key, NAME.pub) and who is
// suspended, when and why (NAME.suspended). Storage reads it without
// importing the workers' transport.
//
// It must never talk to a worker or hold a connection: harness/distrib does.
package roster
