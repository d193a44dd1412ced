package kv

import (
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// The HTTP/JSON wire types are kvcore's (wire.go there); the conversions
// of detector candidates need the monitor, so they live here.

// ToCandidateJSON converts one candidate of spec.
func ToCandidateJSON(spec *monitor.Spec, c IndexedCandidate) kvcore.CandidateJSON {
	return kvcore.CandidateJSON{
		Index: c.Index, Gen: c.Gen, Predicate: c.Predicate, Name: spec.Predicates[c.Predicate].Name,
		Server: c.Candidate.Server, Seq: c.Candidate.Seq,
		Start: kvcore.ToHVCJSON(c.Candidate.Start), End: kvcore.ToHVCJSON(c.Candidate.End),
		Keys: spec.Keys(c.Predicate, c.Candidate.Server), Values: c.Candidate.Values,
	}
}

// FromCandidateJSON converts back (the monitor side).
func FromCandidateJSON(c kvcore.CandidateJSON) monitor.Outbound {
	return monitor.Outbound{Predicate: c.Predicate, Candidate: monitor.Candidate{
		Server: c.Server, Seq: c.Seq, Start: c.Start.HVC(), End: c.End.HVC(), Values: c.Values,
	}}
}
