package coord

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/scripttest"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// TestMachineGolden runs the scripts in testdata/machine: each case is a
// command, a "----" line, and the expected output up to a blank line.
// Commands: add-slot ROLE COUNT; register NAME ROLE TOKEN; fail ID;
// ack ID EPOCH; config; members; promotions; history. -rewrite regenerates
// the expected outputs (review the diff like code).
func TestMachineGolden(t *testing.T) {
	for _, file := range scripttest.Files(t, "testdata/machine/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			m := NewMachine()
			index := uint64(0)
			scripttest.Run(t, file, func(cmd string) string { return runGolden(t, m, &index, cmd) })
		})
	}
}

func runGolden(t *testing.T, m *Machine, index *uint64, cmd string) string {
	f := strings.Fields(cmd)
	num := func(i int) uint64 {
		if i >= len(f) {
			t.Fatalf("%q: missing argument %d", cmd, i)
		}
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return n
	}
	role := func(i int) pb.Role {
		r, ok := ParseRole(f[i])
		if !ok {
			t.Fatalf("%q: bad role %q", cmd, f[i])
		}
		return r
	}
	apply := func(c *pb.Command) proto.Message {
		*index++
		r := m.Apply(*index, c)
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return r
	}
	epochs := func() string { return fmt.Sprintf("epoch %d active %d", m.Epoch(), m.ActiveEpoch()) }
	errOr := func(e *pb.Error, ok string) string {
		if e != nil {
			return fmt.Sprintf("error %v: %s", e.Code, e.Message)
		}
		return ok
	}
	switch f[0] {
	case "add-slot":
		r := apply(&pb.Command{Op: &pb.Command_AddSlot{AddSlot: &pb.AddSlotRequest{Role: role(1), Count: int32(num(2))}}}).(*pb.AddSlotResponse)
		return errOr(r.Error, epochs())
	case "register":
		r := apply(&pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: f[1], Role: role(2),
			Address: f[1] + ":1", Token: num(3)}}}).(*pb.RegisterResponse)
		return errOr(r.Error, fmt.Sprintf("member %d slot %d; %s", r.GetMember().GetId(), r.GetMember().GetSlot(), epochs()))
	case "fail":
		apply(&pb.Command{Op: &pb.Command_Fail{Fail: &pb.Fail{Member: num(1)}}})
		return epochs()
	case "ack":
		r := apply(&pb.Command{Op: &pb.Command_Ack{Ack: &pb.AckEpochRequest{Member: num(1), Epoch: num(2)}}}).(*pb.AckEpochResponse)
		return errOr(r.Error, epochs())
	case "config":
		return formatConfig(m.Config())
	case "members":
		var lines []string
		for _, mb := range m.State().Members {
			state := memberState(mb)
			if mb.Slot >= 0 {
				state = fmt.Sprintf("slot %d", mb.Slot)
			}
			if !mb.Live {
				state = fmt.Sprintf("failed in epoch %d", mb.FailedEpoch)
			}
			lines = append(lines, fmt.Sprintf("%d %s %s: %s; registered in epoch %d, acked %d",
				mb.Id, mb.Name, roleName(mb.Role), state, mb.RegisteredEpoch, mb.AckedEpoch))
		}
		return strings.Join(lines, "\n")
	case "promotions":
		var lines []string
		for _, p := range m.State().Promotions {
			lines = append(lines, fmt.Sprintf("epoch %d %s/%d: %d -> %d", p.Epoch, roleName(p.Role), p.Slot, p.Failed, p.Promoted))
		}
		return strings.Join(lines, "\n")
	case "history":
		var lines []string
		for _, c := range m.State().History {
			lines = append(lines, formatConfig(c))
		}
		return strings.Join(lines, "\n")
	}
	t.Fatalf("unknown command %q", cmd)
	return ""
}

func formatConfig(c *pb.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d active %d gatekeepers [", c.Epoch, c.ActiveEpoch)
	for _, e := range c.Gatekeepers {
		fmt.Fprintf(&b, " %d:%d", e.Slot, e.Member)
	}
	b.WriteString(" ] shards [")
	for _, e := range c.Shards {
		fmt.Fprintf(&b, " %d:%d", e.Slot, e.Member)
	}
	b.WriteString(" ] kronos [")
	for _, e := range c.Kronos {
		fmt.Fprintf(&b, " %d", e.Member)
	}
	b.WriteString(" ]")
	return b.String()
}
