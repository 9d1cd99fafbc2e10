// Package setting lets a library's error be about one of the settings it
// was given (the Docker engine's address, the kubeconfig, the namespace)
// without naming how the program it runs in reads that setting: the error
// says "the docker host", and arena's CLI says "--docker-host" in its place.
// It must never name a flag, an environment variable or a file's key.
package setting

import (
	"errors"
	"fmt"
	"strings"
)

// Name is a setting, as the library speaks of it.
type Name string

// The settings a library error may be about.
const (
	DockerHost    Name = "the Docker engine's address"
	Kubeconfig    Name = "a kubeconfig"
	Namespace     Name = "another namespace"
	Agent         Name = "the agent's path"
	TrustProxy    Name = "the trusted proxies"
	MetricsListen Name = "the metrics address"
)

// placeholder marks where the setting's name goes in an Error's format.
const placeholder = "{setting}"

// Error is an error about a setting. Its text names the setting in words;
// Say names it as the program reads it.
type Error struct {
	Setting Name
	format  string
	args    []any
}

// Errorf is an error about s: format and args as fmt.Errorf takes them
// (%w wraps), with {setting} where the setting's name goes.
func Errorf(s Name, format string, args ...any) *Error {
	return &Error{Setting: s, format: format, args: args}
}

func (e *Error) Error() string { return e.Say(string(e.Setting)) }

// Say is the error's text with the setting called name.
func (e *Error) Say(name string) string {
	return fmt.Errorf(strings.ReplaceAll(e.format, placeholder, name), e.args...).Error()
}

// Unwrap is what the error wraps (%w), if anything.
func (e *Error) Unwrap() error { return errors.Unwrap(fmt.Errorf(e.format, e.args...)) }

// Named is err's text with the setting it is about (if any) called by
// name(setting): a program's own words for what it reads. An error about
// no setting, or about one name knows nothing of, reads as it is.
func Named(err error, name func(Name) string) string {
	msg := err.Error()
	var se *Error
	if !errors.As(err, &se) {
		return msg
	}
	n := name(se.Setting)
	if n == "" {
		return msg
	}
	return strings.Replace(msg, se.Error(), se.Say(n), 1)
}
