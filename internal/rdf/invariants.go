package rdf

import "fmt"

// checkRoundTrip panics unless nq.String() parses back to nq: a programmer
// error in the parser or the renderer, never bad input.
func checkRoundTrip(nq NQuad) {
	s := nq.String()
	p := parser{s: s, line: 1, end: len(s)}
	back, ok, err := p.statement()
	if err != nil || !ok || !back.Equal(nq) {
		panic(fmt.Sprintf("rdf: round trip of %q: ok=%v err=%v back=%q", s, ok, err, back.String()))
	}
}
