package coord

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// metrics are one replica's Prometheus metrics, in a registry of its own:
//
//	weft_coord_epoch, weft_coord_active_epoch   latest and active configuration epoch
//	weft_coord_is_leader                        1 on the serving leader
//	weft_coord_term, weft_coord_applied_index   raft term and applied log index
//	weft_coord_members{role, state}             members by role and state (slot, backup, failed)
//	weft_coord_slots_vacant{role}               slots without a holder
//	weft_coord_heartbeats_total{code}           heartbeats answered, by error code
type metrics struct {
	reg                   *prometheus.Registry
	epoch, active, leader prometheus.Gauge
	term, applied         prometheus.Gauge
	members, vacant       *prometheus.GaugeVec
	heartbeats            *prometheus.CounterVec
}

func newMetrics() *metrics {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	m := &metrics{reg: prometheus.NewRegistry(),
		epoch:   g("weft_coord_epoch", "Latest configuration epoch."),
		active:  g("weft_coord_active_epoch", "Latest epoch every live member acknowledged."),
		leader:  g("weft_coord_is_leader", "1 when this replica is the serving leader."),
		term:    g("weft_coord_term", "Raft term."),
		applied: g("weft_coord_applied_index", "Raft log index applied."),
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weft_coord_members",
			Help: "Members by role and state (slot: holds a slot, backup: waits, live: Kronos, failed)."}, []string{"role", "state"}),
		vacant: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weft_coord_slots_vacant",
			Help: "Slots without a holder, by role."}, []string{"role"}),
		heartbeats: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_coord_heartbeats_total",
			Help: "Heartbeats answered, by error code (OK on success)."}, []string{"code"}),
	}
	m.reg.MustRegister(m.epoch, m.active, m.leader, m.term, m.applied, m.members, m.vacant, m.heartbeats,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) set(st *pb.StatusResponse) {
	m.epoch.Set(float64(st.GetConfig().GetEpoch()))
	m.active.Set(float64(st.GetConfig().GetActiveEpoch()))
	b := 0.0
	if st.IsLeader {
		b = 1
	}
	m.leader.Set(b)
	m.term.Set(float64(st.Term))
	m.applied.Set(float64(st.AppliedIndex))
	m.members.Reset()
	for _, mb := range st.Members {
		m.members.WithLabelValues(roleName(mb.Role), memberState(mb)).Inc()
	}
	m.vacant.Reset()
	for _, s := range st.Slots {
		g := m.vacant.WithLabelValues(roleName(s.Role))
		if s.Holder == 0 {
			g.Inc()
		}
	}
}

func memberState(mb *pb.Member) string {
	switch {
	case !mb.Live:
		return "failed"
	case mb.Slot >= 0:
		return "slot"
	case slotted(mb.Role):
		return "backup"
	}
	return "live"
}

// roleName is the lower-case role name used in flags, labels and pages.
func roleName(r pb.Role) string {
	switch r {
	case pb.Role_GATEKEEPER:
		return "gatekeeper"
	case pb.Role_SHARD:
		return "shard"
	case pb.Role_KRONOS:
		return "kronos"
	}
	return "unspecified"
}

// ParseRole parses a role name (gatekeeper, shard, kronos).
func ParseRole(s string) (pb.Role, bool) {
	for _, r := range []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD, pb.Role_KRONOS} {
		if roleName(r) == s {
			return r, true
		}
	}
	return pb.Role_ROLE_UNSPECIFIED, false
}

// RoleName returns the role's name as ParseRole reads it.
func RoleName(r pb.Role) string { return roleName(r) }
