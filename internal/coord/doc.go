// Package coord is Weft's cluster coordinator: the dissertation's cluster
// manager (§3.3.2.4) and its fault-tolerance scheme (§4.6). Gatekeepers,
// shards, Kronos replicas and backup processes register and heartbeat; a
// member silent for SuspectAfter is declared failed and fenced; a registered
// backup of its role takes its slot; and the configuration epoch (the first
// entry of every vector clock) is bumped behind a barrier.
//
// Layers, as in internal/kronos:
//
//   - Machine (machine.go, snapshot.go): the replicated state — members,
//     slots, epochs, promotions, a bounded history of configurations. Pure
//     and deterministic: commands (Register, Fail, Ack, AddSlot) are raft log
//     entries, and equal logs give byte-identical snapshots.
//   - Node (node.go): one replica's core — an etcd raft RawNode over the
//     Machine, the leader's failure detector, and a seeded election timer
//     (raft's own timer draws from crypto/rand, which would make simulations
//     unrepeatable). No goroutines, clocks or I/O: time is Tick, input is
//     Step/Propose/Heartbeat, output is Ready, persisted before it is sent.
//   - Server (server.go, transport.go, http.go, metrics.go): the shell — one
//     run-loop goroutine owns the Node; raftlog persists; gRPC serves the
//     Coord API and the raft transport; HTTP serves /healthz, /metrics and
//     the /status page.
//   - RunMember (member.go): register-heartbeat-adopt-acknowledge for a
//     role's process, through a coordclient.Client (internal/wire/coordclient,
//     which follows the leader); RunMember renews the process's LeaseState.
//
// Rules and invariants (CheckInvariants after every Apply under -tags
// invariants; the simulation checker in sim_test.go over every state of every
// replica):
//
//   - epochs only increase; 1 <= active epoch <= epoch;
//   - slot numbering is stable: a slot keeps its index across failover and
//     slots are only added (AddSlot, elasticity);
//   - at most one member holds a slot in an epoch: any change of a slot's
//     holder happens in a new epoch, so a failed member and the backup that
//     replaced it never share one (failure and promotion share the new epoch);
//   - the barrier: the active epoch is the latest one every live member has
//     acknowledged (a member registering acknowledges the epoch it joins);
//   - a failed member is fenced forever: its heartbeats answer FENCED and it
//     must register again as a new member (new id).
//
// Leases (lease.go, node_lease.go; docs/cluster.md "Leases"): a member
// serves only inside a lease, counted on its own clock from the instant it
// sent a heartbeat the serving leader answered after raft confirmed its
// leadership (a ReadIndex per tick); the leader takes a slot from its holder
// (proposes Fail) only once the holder's last grant + Lease + MaxDrift has
// passed on its own clock, and grants a member nothing more once it decided
// to replace it. A new serving leader assumes a grant to every live member
// at the instant it starts serving. Members report peers they cannot reach;
// the leader replaces one side (resolveUnreachable). The simulation
// (sim_test.go) runs the same LeaseState and Node code with drifting clocks
// and checks that no two members may serve one slot at once.
//
// Failure detection is the serving leader's soft state: a replica serves
// (answers heartbeats, proposes Fail) only while it leads, has heard from a
// quorum within an election timeout, and has applied its log up to its
// term's first entry. A replica that starts serving gives every live member a
// full SuspectAfter, so a coordinator failover does not fail its members.
//
// Machine and Node are not safe for concurrent use; Server is.
package coord
