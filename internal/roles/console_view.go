package roles

import (
	"context"
	"sync/atomic"

	"github.com/weft-db/weft/internal/api/console"
	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/wire/coordclient"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
)

// coordinatedView answers a coordinated gatekeeper's console cluster view
// from the coordinator's status (the leader's, or the most caught-up
// replica's); the member whose HTTP address self holds is the process
// answering.
func coordinatedView(c *coordclient.Client, self *atomic.Pointer[string]) console.ClusterSource {
	return func(ctx context.Context) (*console.ClusterView, error) {
		st, err := c.LeaderStatus(ctx)
		if err != nil {
			return nil, err
		}
		me := ""
		if p := self.Load(); p != nil {
			me = *p
		}
		return clusterViewOf(st, me), nil
	}
}

// clusterViewOf converts the coordinator's status into the console's view.
// Pure.
func clusterViewOf(st *coordpb.StatusResponse, selfHTTP string) *console.ClusterView {
	sv := coord.StatusView{StatusResponse: st}
	v := &console.ClusterView{Mode: "cluster", Epoch: st.GetConfig().GetEpoch(), ActiveEpoch: st.GetConfig().GetActiveEpoch(),
		Coordinator: &console.Coordinator{Replica: st.GetNodeId(), Leader: st.GetLeaderId(), LeaderAddress: st.GetLeaderHint(),
			Term: st.GetTerm(), Applied: st.GetAppliedIndex()}}
	for _, mb := range st.GetMembers() {
		age := int64(-1)
		if a, ok := st.GetHeartbeatAgeMs()[mb.GetId()]; ok {
			age = int64(a)
		}
		addr := mb.GetApiAddress() // a gatekeeper's client-facing API
		if addr == "" {
			addr = mb.GetAddress()
		}
		v.Members = append(v.Members, console.Member{ID: mb.GetId(), Name: mb.GetName(), Role: sv.Role(mb.GetRole()),
			State: sv.State(mb), Slot: mb.GetSlot(), Address: addr, HTTP: mb.GetHttpAddress(), Live: mb.GetLive(),
			HeartbeatAgeMs: age, Load: st.GetLoad()[mb.GetId()].GetValues(),
			Self: selfHTTP != "" && mb.GetHttpAddress() == selfHTTP})
	}
	for _, s := range st.GetSlots() {
		v.Slots = append(v.Slots, console.Slot{Role: sv.Role(s.GetRole()), Index: s.GetIndex(), Holder: s.GetHolder(),
			SinceEpoch: s.GetSinceEpoch()})
	}
	for _, c := range st.GetHistory() {
		e := console.Epoch{Epoch: c.GetEpoch(), ActiveEpoch: c.GetActiveEpoch()}
		for _, g := range c.GetGatekeepers() {
			e.Gatekeepers = append(e.Gatekeepers, g.GetMember())
		}
		for _, s := range c.GetShards() {
			e.Shards = append(e.Shards, s.GetMember())
		}
		v.Epochs = append(v.Epochs, e)
	}
	return v
}
