package kv

import (
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

// The HTTP/JSON wire form (docs in doc.go). Values are base64 (JSON's form
// of []byte); versions are {"entries": [{"actor", "counter"}]}; clocks are
// {"self", "epsilon", "entries"}.

// HVCJSON is a hybrid vector clock on the wire.
type HVCJSON struct {
	Self    uint32   `json:"self"`
	Epsilon uint64   `json:"epsilon"`
	Entries []uint64 `json:"entries"`
}

// ToHVCJSON converts a clock (nil for the zero clock).
func ToHVCJSON(h vclock.HVC) *HVCJSON {
	if h.IsZero() {
		return nil
	}
	return &HVCJSON{Self: h.Self, Epsilon: h.Epsilon, Entries: h.Entries}
}

// HVC converts back (the zero clock for nil).
func (j *HVCJSON) HVC() vclock.HVC {
	if j == nil {
		return vclock.HVC{}
	}
	return vclock.HVC{Self: j.Self, Epsilon: j.Epsilon, Entries: j.Entries}
}

// GetRequest is POST /v1/kv/get.
type GetRequest struct {
	Key string   `json:"key"`
	HVC *HVCJSON `json:"hvc,omitempty"`
}

// GetResponse answers it.
type GetResponse struct {
	Siblings []Sibling `json:"siblings"`
	HVC      *HVCJSON  `json:"hvc"`
}

// PutRequest is POST /v1/kv/put: one replica's share of a PUT (the client
// sends it to each replica; §II-B).
type PutRequest struct {
	Key     string   `json:"key"`
	Sibling Sibling  `json:"sibling"`
	HVC     *HVCJSON `json:"hvc,omitempty"`
}

// PutResponse answers it.
type PutResponse struct {
	Outcome string   `json:"outcome"` // applied, duplicate, obsolete
	HVC     *HVCJSON `json:"hvc"`
}

// Meta is GET /v1/kv/meta: what a client needs to join (Voldemort's
// metadata, §II-B: servers, N, suggested R and W).
type Meta struct {
	Self              int      `json:"self"`
	Peers             []string `json:"peers"`
	N                 int      `json:"n"`
	VNodes            int      `json:"vnodes"`
	R                 int      `json:"r"`
	W                 int      `json:"w"`
	Epsilon           uint64   `json:"epsilon"`
	SiblingsMax       int      `json:"siblings_max"`
	VersionEntriesMax int      `json:"version_entries_max"`
	Monitoring        bool     `json:"monitoring"`
}

// CandidateJSON is one detector candidate on the wire.
type CandidateJSON struct {
	Index     uint64   `json:"index"`
	Predicate int      `json:"predicate"`
	Name      string   `json:"name"`
	Server    int      `json:"server"`
	Seq       uint64   `json:"seq"`
	Start     *HVCJSON `json:"start"`
	End       *HVCJSON `json:"end"`
	Keys      []string `json:"keys"`
	Values    []string `json:"values"`
}

// CandidatesResponse is GET /v1/kv/candidates?after=I&max=M.
type CandidatesResponse struct {
	Candidates []CandidateJSON `json:"candidates"`
	// Missed counts candidates after `after` that the buffer already dropped.
	Missed uint64 `json:"missed"`
}

// ToCandidateJSON converts one candidate of spec.
func ToCandidateJSON(spec *monitor.Spec, c IndexedCandidate) CandidateJSON {
	return CandidateJSON{
		Index: c.Index, Predicate: c.Predicate, Name: spec.Predicates[c.Predicate].Name,
		Server: c.Candidate.Server, Seq: c.Candidate.Seq,
		Start: ToHVCJSON(c.Candidate.Start), End: ToHVCJSON(c.Candidate.End),
		Keys: spec.Keys(c.Predicate, c.Candidate.Server), Values: c.Candidate.Values,
	}
}

// ErrorJSON is every error answer: {"error": {"code", "message", "retryable"}}.
type ErrorJSON struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is an error's code and text.
type ErrorBody struct {
	Code      Code   `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// ParseOutcome reads an Outcome's String form.
func ParseOutcome(s string) (Outcome, bool) {
	for _, o := range []Outcome{Applied, Duplicate, Obsolete} {
		if o.String() == s {
			return o, true
		}
	}
	return 0, false
}
