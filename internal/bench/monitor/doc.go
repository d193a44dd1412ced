// Package monitor reproduces §VI of "Optimistic Execution in Key-Value
// Store" on this machine (`weft bench monitor`, docs/kv.md, "Benchmark"):
// the throughput benefit of eventual consistency with monitors and rollback
// over sequential consistency (the paper: +20–40%), the monitors' overhead
// over plain eventual consistency (the paper: under 8%), violations found
// and rolled back, and the detection latency.
//
// For each replication factor N it starts rings of N `weft kv serve`
// processes on loopback from the weft binary (KVProcs, optionally behind
// fault proxies), one per mode — sequential (R1, W=N, no monitors),
// eventual (R1 W1) and eventual+monitor (R1 W1, a detector on every server,
// the monitor and rollback on) — and drives 2N clients of the synthetic
// conjunctive workload at each PUT percentage, the modes measured in turn
// in rotating order (Options.Repeat rounds) so a change of the machine's
// speed falls on all of them alike. --graph (on by default) adds the
// graph application (local mutual exclusion). With --net-delay the delay is added by a
// delaying TCP proxy or by the clients' HTTP transport (delay_transport.go),
// and net_benefit is the benefit the delays alone account for (computed;
// netbenefit.go).
//
//	weft bench monitor --repeat 3 --out bench/results/monitor
//	weft bench monitor --n 2 --put-pct 50 --duration 1s --graph=false
//	weft bench monitor --replot --out bench/results/monitor   # redraw the PNGs
//
// Results go to monitor.json and PNGs in --out. KVProcs also serves the
// process-level kv tests (kvfault_test.go). Run measures one cell after
// another; two runs at once would distort each other's figures.
package monitor
