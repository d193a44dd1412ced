package coord

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/scripttest"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// TestClusterScripts runs the whole-cluster scripts in testdata/cluster on
// the deterministic simulator (3 replicas, 1 gatekeeper and 2 shard slots,
// no random faults, no loss): each case is a command, "----", and the
// expected output. -rewrite regenerates the outputs. Commands:
//
//	member NAME ROLE     start a member process (it registers, then heartbeats)
//	kill NAME            kill -9 a member: it stops heartbeating for good
//	stall NAME TICKS     its heartbeats are lost for TICKS
//	crash R / restart R  crash or restart coordinator replica R
//	partition R / heal   cut replica R off from the others / reconnect all
//	tick N               advance N ticks
//	stabilize            advance until a leader serves and the latest epoch is
//	                     active, for at most 2000 ticks
//	leader               the serving leader, or "none"
//	status               the serving leader's configuration and members
func TestClusterScripts(t *testing.T) {
	for _, file := range scripttest.Files(t, "testdata/cluster/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			o := defaultSimOptions()
			o.scripted, o.faults, o.lossPct, o.gatekeepers, o.shards, o.backups = true, false, 0, 1, 2, 0
			o.driftPct = 0
			s := newSim(t, 1, o)
			scripttest.Run(t, file, s.script)
			if len(s.chk.violations) > 0 {
				t.Fatalf("checker: %s", strings.Join(s.chk.violations, "\n"))
			}
		})
	}
}

func (s *sim) script(cmd string) string {
	f := strings.Fields(cmd)
	arg := func(i int) string {
		if i >= len(f) {
			s.t.Fatalf("%q: missing argument %d", cmd, i)
		}
		return f[i]
	}
	num := func(i int) int {
		n, err := strconv.Atoi(arg(i))
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		return n
	}
	member := func(name string) *simMember {
		for _, mb := range s.members {
			if mb.name == name {
				return mb
			}
		}
		s.t.Fatalf("%q: no member %s", cmd, name)
		return nil
	}
	replica := func(i int) *simReplica {
		r := num(i)
		if r < 1 || r > len(s.replicas) {
			s.t.Fatalf("%q: no replica %d", cmd, r)
		}
		return s.replicas[r-1]
	}
	ticks := func(n int) {
		for range n {
			s.now++
			s.step()
		}
	}
	switch f[0] {
	case "member":
		role, ok := ParseRole(arg(2))
		if !ok {
			s.t.Fatalf("%q: bad role", cmd)
		}
		s.members = append(s.members, s.newMember(arg(1), role, uint64(len(s.members)+1), len(s.members)%len(s.replicas)))
		return "ok"
	case "kill":
		member(arg(1)).alive = false
		return "ok"
	case "stall":
		member(arg(1)).pausedTo = s.now + num(2)
		return "ok"
	case "crash":
		replica(1).node = nil
		return "ok"
	case "restart":
		s.start(replica(1))
		return "ok"
	case "partition":
		clear(s.side)
		s.side[replica(1).id] = 1
		return "ok"
	case "heal":
		clear(s.side)
		return "ok"
	case "tick":
		ticks(num(1))
		return fmt.Sprintf("tick %d", s.now)
	case "stabilize":
		start := s.now
		for s.now-start < 2000 {
			ticks(1)
			if l := s.leader(); l != nil && l.Machine().Epoch() == l.Machine().ActiveEpoch() && s.settled(l) {
				return fmt.Sprintf("stable after %d ticks", s.now-start)
			}
		}
		return "not stable after 2000 ticks"
	case "leader":
		if l := s.leader(); l != nil {
			id, term := l.Leader()
			return fmt.Sprintf("replica %d term %d", id, term)
		}
		return "none"
	case "status":
		l := s.leader()
		if l == nil {
			return "no serving leader"
		}
		lines := []string{formatConfig(l.Machine().Config())}
		for _, mb := range l.Machine().State().Members {
			state := memberState(mb)
			if mb.Slot >= 0 {
				state = fmt.Sprintf("slot %d", mb.Slot)
			}
			if !mb.Live {
				state = fmt.Sprintf("failed in epoch %d", mb.FailedEpoch)
			}
			lines = append(lines, fmt.Sprintf("member %d %s %s: %s, acked %d", mb.Id, s.nameOf(mb), roleName(mb.Role), state, mb.AckedEpoch))
		}
		return strings.Join(lines, "\n")
	}
	s.t.Fatalf("unknown command %q", cmd)
	return ""
}

// settled: every live member process the script started is registered and
// none is waiting to be detected (a killed one is already failed).
func (s *sim) settled(l *Node) bool {
	live := l.Machine().LiveMembers()
	for _, mb := range s.members {
		registered := mb.id != 0 && slices.Contains(live, mb.id)
		if mb.alive && !mb.fenced && !registered || !mb.alive && registered {
			return false
		}
	}
	return true
}

func (s *sim) nameOf(m *pb.Member) string { return m.Name }
