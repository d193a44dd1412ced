package kvcore

import "github.com/weft-db/weft/internal/vclock"

// The HTTP/JSON wire form (docs in internal/kv's doc.go). Values are base64 (JSON's form
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
	// Gen is the replica's rollback generation (omitted while 0): a session
	// that sees it grow knows a rollback discarded recent writes.
	Gen uint64 `json:"gen,omitempty"`
	// Advice, if set, is the quorum the rollback coordinator advises
	// because violations are frequent (§IV: switch to sequential).
	Advice *Advice `json:"advice,omitempty"`
}

// Advice is a suggested R and W.
type Advice struct {
	R int `json:"r"`
	W int `json:"w"`
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
	Gen     uint64   `json:"gen,omitempty"`
	Advice  *Advice  `json:"advice,omitempty"`
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
	Gen               uint64   `json:"gen"`
	Advice            *Advice  `json:"advice,omitempty"`
}

// CandidateJSON is one detector candidate on the wire.
type CandidateJSON struct {
	Index     uint64   `json:"index"`
	Gen       uint64   `json:"gen"`
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
	// Boot identifies the server incarnation and Gen its current rollback
	// generation: when either changes, candidate Seq numbers restart.
	Boot uint64 `json:"boot"`
	Gen  uint64 `json:"gen"`
	// Clock is the server's HVC when it answered (its mark for a monitor
	// that got no candidates).
	Clock *HVCJSON `json:"clock,omitempty"`
}

// PauseRequest is POST /v1/kv/admin/pause and /resume: fence (or unfence)
// the server for rollback generation Gen.
type PauseRequest struct {
	Gen uint64 `json:"gen"`
	// TimeoutMs bounds the pause: the server resumes by itself after it, so
	// a coordinator that dies cannot fence the store forever. 0: the
	// server's PauseTimeout.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
}

// PauseResponse answers pause and resume.
type PauseResponse struct {
	Paused bool     `json:"paused"`
	Gen    uint64   `json:"gen"`
	HVC    *HVCJSON `json:"hvc"`
}

// RestoreRequest is POST /v1/kv/admin/restore: rewind to the cut C(Before)
// (Replica.Restore) as rollback generation Gen. The server must be paused.
type RestoreRequest struct {
	Before uint64 `json:"before"`
	Gen    uint64 `json:"gen"`
	// Keep are the versions of writes some replica applied before the cut
	// (EarlyVersions): kept here even if they arrived after it.
	Keep []Version `json:"keep,omitempty"`
}

// VersionsRequest is POST /v1/kv/admin/late ({before}: the versions this
// replica applied at or after the cut) and /v1/kv/admin/early ({before,
// versions}: those of versions it applied before the cut).
type VersionsRequest struct {
	Before   uint64    `json:"before"`
	Versions []Version `json:"versions,omitempty"`
}

// VersionsResponse answers them.
type VersionsResponse struct {
	Versions []Version `json:"versions"`
	// CutTimes (early only) are the CutTimes of the applications found.
	CutTimes []uint64 `json:"cut_times,omitempty"`
}

// RestoreResponse answers it.
type RestoreResponse struct {
	Undone int      `json:"undone"`
	Keys   int      `json:"keys"`
	Gen    uint64   `json:"gen"`
	HVC    *HVCJSON `json:"hvc"`
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

// TxnWriteJSON is one write of a transaction on the wire.
type TxnWriteJSON struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
	// Add makes Value a signed decimal integer added to the key's current
	// value (TxnWrite.Add).
	Add bool `json:"add,omitempty"`
}

// TxnRequest is POST /v1/kv/txn: read Reads and write Writes atomically,
// serialisably with every other transaction.
type TxnRequest struct {
	Reads  []string       `json:"reads,omitempty"`
	Writes []TxnWriteJSON `json:"writes,omitempty"`
}

// TxnResponse answers it: every read key's siblings at the transaction's
// place in the serial order (after its predecessors, before its own
// writes), and the transaction's Kronos event.
type TxnResponse struct {
	Reads map[string][]Sibling `json:"reads"`
	Txn   StampJSON            `json:"txn"`
}

// StampJSON names a transaction (its coordinator's clock stamp).
type StampJSON struct {
	Owner    uint32   `json:"owner"`
	Epoch    uint64   `json:"epoch"`
	Counters []uint64 `json:"counters"`
}

// ToStampJSON converts a stamp.
func ToStampJSON(s vclock.Stamp) StampJSON {
	return StampJSON{Owner: s.Owner, Epoch: s.Clock.Epoch, Counters: s.Clock.Counters}
}

// Stamp converts back.
func (j StampJSON) Stamp() vclock.Stamp {
	return vclock.Stamp{Owner: j.Owner, Clock: vclock.Clock{Epoch: j.Epoch, Counters: j.Counters}}
}

// ServerStats is GET /v1/kv/stats.
type ServerStats struct {
	Replica  ReplicaStats   `json:"replica"`
	Window   WindowStats    `json:"window"`
	Paused   bool           `json:"paused"`
	Detector *DetectorStats `json:"detector,omitempty"`
	Outbox   OutboxStats    `json:"outbox"`
}

// ReplicaStats counts a replica's requests since it opened.
type ReplicaStats struct {
	Gets      uint64 `json:"gets"`
	Applied   uint64 `json:"applied"`
	Duplicate uint64 `json:"duplicate"`
	Obsolete  uint64 `json:"obsolete"`
	Rejected  uint64 `json:"rejected"` // PUTs refused: too many siblings, reused version
	Undone    uint64 `json:"undone"`   // PUTs rolled back by Restore
}

// WindowStats describes the rollback window.
type WindowStats struct {
	Records uint64 `json:"records"`
	Floor   uint64 `json:"floor"` // no rollback can reach before this time
	Gen     uint64 `json:"gen"`
}

// DetectorStats counts a detector's output.
type DetectorStats struct {
	Emitted uint64 `json:"emitted"` // candidates produced
	Dropped uint64 `json:"dropped"` // pushed out of the full buffer (read or not)
	Errors  uint64 `json:"errors"`  // PUTs the detector refused (clock regressions)
}

// OutboxStats describes the transactional writes' outbox (internal/kv/txn_outbox.go).
type OutboxStats struct {
	Len    int    `json:"len"`    // records not yet acknowledged by their replica
	Pushed uint64 `json:"pushed"` // records acknowledged since the server started
	Failed uint64 `json:"failed"` // pushes that failed (and were retried)
}
