package gatekeeper

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/scripttest"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// TestCoreScripts runs the scripts in testdata/core on the real Core: each
// case is a command, "----", and what the core answered, followed by the
// effects the command produced, drained as the shell drains them after
// every call: Ready's deliveries ("→ shard S: seq N ..."), then Acked
// ("acked NAME") and Released ("released ID"). Transactions and stamps are
// named by the script; a delivered stamp is printed with its name (a NOP's
// has none). -rewrite regenerates the outputs: review the diff like code.
//
// A clock is written e<epoch>:[c0,c1,...] (vclock.Parse); an operation is
// SHARD:VERTEX, a vertex created on SHARD (the core routes by shard only).
// Commands:
//
//	new [id=I] [gatekeepers=G] [shards=S] [epoch=E] [inflight=N] [peer-ack] [read-points]
//	                          a fresh core (defaults: 0, 1, 1, 1, unbounded)
//	begin NAME                BeginCommit: NAME's stamp, or the error
//	stamp NAME                Stamp: a stamp for a node program or a read
//	resolve NAME OP... | abort  Resolve: NAME committed with OPs, or aborted
//	declare NAME SHARD...     Declare: NAME will write at most these shards
//	nop SHARD [CLOCK]         RequestNop: shard SHARD needs the queue past CLOCK
//	merge CLOCK               Merge a peer's (or a NOP request's) clock
//	peer J CLOCK              PeerClock: peer J announced CLOCK
//	note [CLOCK]              Note: the idle gatekeeper's clock after merging, or none
//	note-for SHARD [CLOCK]    NoteFor: a note valid for SHARD, or none
//	read-point                ReadPoint: the oldest in-flight transaction's read point
//	hold ID NAME              Hold the answer ID until NAME's stamp is stable
//	stable NAME               Stable: every peer has merged NAME's stamp
//	state                     clock, in-flight transactions, Idle, WantAnnounce
func TestCoreScripts(t *testing.T) {
	for _, file := range scripttest.Files(t, "testdata/core/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			scripttest.Run(t, file, newCoreScript(t))
		})
	}
}

// TestCoreScriptsPlanted: every expected output of a script, altered, is
// reported, so the scripts above can fail.
func TestCoreScriptsPlanted(t *testing.T) {
	scripttest.Planted(t, "testdata/core/fifo.txt", newCoreScript)
}

type coreScript struct {
	t     testing.TB
	c     *Core
	stamp map[string]vclock.Stamp // by script name
	name  map[string]string       // stamp's String → script name
}

func newCoreScript(t testing.TB) func(string) string {
	s := &coreScript{t: t}
	return s.run
}

func (s *coreScript) run(cmd string) string {
	f := strings.Fields(cmd)
	if f[0] != "new" && s.c == nil {
		s.t.Fatalf("%q: no core yet (new)", cmd)
	}
	out := s.command(cmd, f)
	if f[0] == "new" {
		return out
	}
	return strings.Join(append([]string{out}, s.effects()...), "\n")
}

func (s *coreScript) command(cmd string, f []string) string {
	arg := func(i int) string {
		if i >= len(f) {
			s.t.Fatalf("%q: missing argument %d", cmd, i)
		}
		return f[i]
	}
	num := func(i int) uint32 {
		n, err := strconv.ParseUint(arg(i), 10, 32)
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		return uint32(n)
	}
	clock := func(i int) vclock.Clock {
		if i >= len(f) {
			return vclock.Clock{}
		}
		c, err := vclock.Parse(f[i])
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		return c
	}
	switch f[0] {
	case "new":
		return s.newCore(cmd, f[1:])
	case "begin":
		st, err := s.c.BeginCommit()
		if err != nil {
			return "error: " + err.Error()
		}
		return s.named(arg(1), st)
	case "stamp":
		return s.named(arg(1), s.c.Stamp())
	case "resolve":
		var ops []txn.ShardOp
		if arg(2) != "abort" {
			ops = s.ops(cmd, f[2:])
		}
		return errOK(s.c.Resolve(s.lookup(cmd, arg(1)), ops))
	case "declare":
		var shards []uint32
		for i := 2; i < len(f); i++ {
			shards = append(shards, num(i))
		}
		return errOK(s.c.Declare(s.lookup(cmd, arg(1)), shards))
	case "nop":
		s.c.RequestNop(num(1), clock(2))
		return "ok"
	case "merge":
		s.c.Merge(clock(1))
		return "clock " + s.c.Clock().String()
	case "peer":
		s.c.PeerClock(num(1), clock(2))
		return "clock " + s.c.Clock().String()
	case "note":
		return noteOr(s.c.Note(clock(1)))
	case "note-for":
		return noteOr(s.c.NoteFor(num(1), clock(2)))
	case "read-point":
		if p, ok := s.c.ReadPoint(); ok {
			return "read point " + p.String()
		}
		return "none"
	case "hold":
		id, err := strconv.ParseUint(arg(1), 10, 64)
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		s.c.Hold(id, s.lookup(cmd, arg(2)))
		return "ok"
	case "stable":
		if s.c.Stable(s.lookup(cmd, arg(1))) {
			return "stable"
		}
		return "not stable"
	case "state":
		var in []string
		for _, st := range s.c.Inflight() {
			in = append(in, s.label(st))
		}
		return fmt.Sprintf("clock %s; in flight [%s]; idle %v; want announce %v",
			s.c.Clock(), strings.Join(in, " "), s.c.Idle(), s.c.WantAnnounce())
	}
	s.t.Fatalf("unknown command %q", cmd)
	return ""
}

func (s *coreScript) newCore(cmd string, opts []string) string {
	cfg := Config{Gatekeepers: 1, Shards: 1, Epoch: 1}
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		var n uint64
		if v != "" {
			var err error
			if n, err = strconv.ParseUint(v, 10, 32); err != nil {
				s.t.Fatalf("%q: %v", cmd, err)
			}
		}
		switch k {
		case "id":
			cfg.ID = uint32(n)
		case "gatekeepers":
			cfg.Gatekeepers = int(n)
		case "shards":
			cfg.Shards = int(n)
		case "epoch":
			cfg.Epoch = n
		case "inflight":
			cfg.InflightMax = int(n)
		case "peer-ack":
			cfg.PeerAck = true
		case "read-points":
			cfg.ReadPoints = true
		default:
			s.t.Fatalf("%q: unknown option %q", cmd, o)
		}
	}
	s.c = New(cfg)
	s.stamp, s.name = map[string]vclock.Stamp{}, map[string]string{}
	return fmt.Sprintf("gk%d of %d gatekeepers, shards %d: clock %s", cfg.ID, cfg.Gatekeepers, cfg.Shards, s.c.Clock())
}

// effects drains what the last call produced, as the shell does.
func (s *coreScript) effects() []string {
	var out []string
	for _, d := range s.c.Ready() {
		e := d.Entry
		l := fmt.Sprintf("→ shard %d: seq %d %s", d.Shard, e.Seq, s.label(e.Stamp))
		if e.Nop {
			l += " nop"
		}
		for _, op := range e.Ops {
			l += fmt.Sprintf(" %d:%s", op.Shard, op.Vertex)
		}
		out = append(out, l)
	}
	for _, st := range s.c.Acked() {
		out = append(out, "acked "+s.label(st))
	}
	for _, id := range s.c.Released() {
		out = append(out, fmt.Sprintf("released %d", id))
	}
	return out
}

func (s *coreScript) named(n string, st vclock.Stamp) string {
	if _, ok := s.stamp[n]; ok {
		s.t.Fatalf("name %s used twice", n)
	}
	s.stamp[n], s.name[st.String()] = st, n
	return n + " " + st.String()
}

func (s *coreScript) lookup(cmd, n string) vclock.Stamp {
	st, ok := s.stamp[n]
	if !ok {
		s.t.Fatalf("%q: no stamp named %s", cmd, n)
	}
	return st
}

// label is a stamp with its script name, when it has one.
func (s *coreScript) label(st vclock.Stamp) string {
	if n, ok := s.name[st.String()]; ok {
		return n + " " + st.String()
	}
	return st.String()
}

func (s *coreScript) ops(cmd string, args []string) []txn.ShardOp {
	ops := make([]txn.ShardOp, len(args))
	for i, a := range args {
		sh, v, ok := strings.Cut(a, ":")
		n, err := strconv.ParseUint(sh, 10, 32)
		if !ok || err != nil {
			s.t.Fatalf("%q: operation %q is not SHARD:VERTEX", cmd, a)
		}
		ops[i] = txn.ShardOp{Shard: uint32(n), Kind: txn.OpCreateVertex, Vertex: v}
	}
	return ops
}

func errOK(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

func noteOr(c vclock.Clock, ok bool) string {
	if !ok {
		return "none"
	}
	return "note " + c.String()
}
