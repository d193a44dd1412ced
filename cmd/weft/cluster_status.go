package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/wire/coordpb"
)

// printClusterStatus prints `weft cluster status`: the processes, then the
// coordinator's slots and members.
func printClusterStatus(out io.Writer, s *launch.Status) {
	st := s.State
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROCESS\tPID\tSTATE\tADDR\tHTTP\tRAFT")
	for _, p := range st.Procs {
		state := "down"
		if s.Alive[p.Name] {
			state = "up"
		}
		raft := ""
		if k, ok := s.Kronos[p.Name]; ok {
			raft = fmt.Sprintf("leader %d term %d applied %d", k.LeaderId, k.Term, k.AppliedIndex)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", p.Name, p.Pid, state, p.Addr, p.HTTPAddr, raft)
	}
	w.Flush()
	for _, n := range st.NotStarted {
		fmt.Fprintf(out, "not started: %s\n", n)
	}
	for _, p := range st.Procs {
		if p.DgraphHTTPAddr != "" {
			fmt.Fprintf(out, "%s: Dgraph HTTP http://%s, Dgraph gRPC %s (served once it holds a slot)\n", p.Name, p.DgraphHTTPAddr, p.DgraphGRPCAddr)
		}
	}
	switch {
	case s.CoordErr != nil:
		fmt.Fprintf(out, "\ncoordinator: %v\n", s.CoordErr)
	case s.Coord != nil:
		printCoordStatus(out, s.Coord)
		if s.StatusPage != "" {
			fmt.Fprintf(out, "status page: %s\n", s.StatusPage)
		}
	}
}

func printCoordStatus(out io.Writer, cs *coordpb.StatusResponse) {
	v := coord.StatusView{StatusResponse: cs}
	fmt.Fprintf(out, "\ncoordinator: leader %d term %d applied %d; epoch %d, active epoch %d\n",
		cs.LeaderId, cs.Term, cs.AppliedIndex, cs.Config.GetEpoch(), cs.Config.GetActiveEpoch())
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SLOT\tMEMBER\tADDRESS\tSINCE EPOCH")
	for _, s := range cs.Slots {
		m := "vacant"
		if s.Holder != 0 {
			m = fmt.Sprint(s.Holder)
		}
		fmt.Fprintf(w, "%s/%d\t%s\t%s\t%d\n", v.Role(s.Role), s.Index, m, v.Address(s.Holder), s.SinceEpoch)
	}
	w.Flush()
	w = tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nMEMBER\tNAME\tROLE\tSTATE\tADDRESS\tACKED\tFAILED\tLAST HEARTBEAT\tLOAD")
	for _, m := range cs.Members {
		failed := ""
		if !m.Live {
			failed = fmt.Sprint(m.FailedEpoch)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Id, m.Name, v.Role(m.Role), v.State(m), m.Address,
			m.AckedEpoch, failed, v.HeartbeatAge(m.Id), v.Load(m.Id))
	}
	w.Flush()
}
