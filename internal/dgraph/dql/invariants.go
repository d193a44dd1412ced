package dql

import "fmt"

// checkQuery panics unless q's canonical text parses back (with the same
// outside variable uses) to an equal query that renders to the same text:
// a programmer error in the parser or the renderer, never bad input.
func checkQuery(q *Query, opt Options) {
	text := q.String()
	back, err := parseQuery(text, Options{Uses: opt.Uses})
	assert(err == nil, "canonical text does not parse: %v\n%s", err, text)
	assert(back.Equal(q), "canonical text parses to another query:\n%s", text)
	assert(back.String() == text, "canonical text is not stable:\n%s\n%s", text, back.String())
}

// checkUpsert is checkQuery for mutation requests.
func checkUpsert(u *Upsert) {
	text := u.String()
	back, err := parseMutation(text, u.Query != nil)
	assert(err == nil, "canonical text does not parse: %v\n%s", err, text)
	assert(back.Equal(u), "canonical text parses to another mutation:\n%s", text)
	assert(back.String() == text, "canonical text is not stable:\n%s\n%s", text, back.String())
}

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic("dql: invariant: " + fmt.Sprintf(format, args...))
	}
}
