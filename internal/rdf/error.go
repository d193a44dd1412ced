package rdf

import "fmt"

// Error is a parse error at a line and column (both from 1; the column counts
// characters). Err is ErrSyntax, ErrValue or ErrRange, or an error wrapping
// one of them.
type Error struct {
	Line, Col int
	Msg       string
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("rdf: line %d col %d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap lets errors.Is see ErrSyntax, ErrValue or ErrRange.
func (e *Error) Unwrap() error { return e.Err }
