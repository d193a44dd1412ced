package dql

import "fmt"

// Pos is a place in DQL text: line and column (in characters), from 1.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("line %d col %d", p.Line, p.Col) }

// Error is a DQL error at a place in the text. Every error the package
// returns is an *Error; Pos is zero only for errors about the request as a
// whole (text too long, a bad variables object).
type Error struct {
	Pos
	Msg string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "dql: " + e.Msg
	}
	return fmt.Sprintf("dql: line %d col %d: %s", e.Line, e.Col, e.Msg)
}

func errorAt(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
