// Package readmetest runs what the documentation shows, as a reader would:
// every arena command of README.md (its code blocks and the commands it
// names in its text), of the code blocks of docs/*.md, and the checks the
// examples' READMEs give, with bin/ built as make builds it and the bots in
// Docker. A command that does not work as written fails a test; one that
// cannot run as written (a placeholder, a remote host) is listed in the test
// with the reason. The package holds tests only.
package readmetest
