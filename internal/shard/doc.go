// Package shard is the pure scheduling core of a Weft shard server
// (dissertation §3.5.1–3.5.2, Figure 3.6): one FIFO queue per gatekeeper,
// write transactions executed lowest timestamp first, and node-program tasks
// run only once no queued or future transaction can precede them.
//
// Rules:
//   - A write at the head of queue i runs when it is before the heads of all
//     other queues (vector clocks; concurrent heads go to Kronos, which keeps
//     any order it already holds and otherwise takes the lower gatekeeper's).
//     Every queue must have a head: an empty queue's future entries are
//     unknown, so the shard asks that gatekeeper for a NOP.
//   - A task at stamp t runs when, for every gatekeeper i, the next entry of
//     queue i is after t, or queue i is empty and its last executed entry is
//     after t. A concurrent write head is ordered before t (Kronos, "writes
//     before programs"), so a program never misses a finished transaction.
//   - NOPs never go to Kronos: a NOP head that does not follow the stamp in
//     question is simply consumed (it carries no writes), and the NOP request
//     carries that stamp's clock, so the gatekeeper's next NOP follows it by
//     vector clock.
//
// Core is deterministic given its inputs and its Oracle's answers; it is not
// safe for concurrent use.
//
// Shell (shell.go) is the shard's one shell, run by weft serve, a cluster's
// shard processes and the simulation alike: an inbox (Push never blocks),
// rounds (Round: the gatekeepers' notes, the inbox, the core) run by one
// goroutine at a time (Loop, or the simulation's scheduler), applying
// entries to the partition, reads and program batches at their stamps —
// refused with ErrTooOld below the watermark the partition was collected
// at, forwarded (MovedError) for units that moved — and NOP requests,
// reports and hops through a Host. Push, Wake, Stats, Positions and
// Position are safe for concurrent use; Round and Loop are not.
package shard
