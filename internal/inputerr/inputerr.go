// Package inputerr marks errors that are the user's input — a flag, a
// name, a number or a file — rather than a failure of the work, so that
// every command prints them as one line and exits with status 2.
package inputerr

import "fmt"

// Error is input a simulation or an engine cannot accept.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error with a formatted message (%w wraps).
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
