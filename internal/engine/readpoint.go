package engine

// Read points (gatekeeper.Config.ReadPoints). A read stamped fresh follows
// every transaction any gatekeeper has stamped, so on the shards those
// transactions write it waits for their durable commit (an fsync, 1–5 ms,
// much more when the disk stalls). A transaction not yet acknowledged may
// be ordered after the read instead: strict serializability only asks a
// read to follow what was acknowledged, or seen by a finished read, before
// it began. Each gatekeeper stamps a read point just before every
// transaction it stamps and offers the point of its oldest one in flight;
// a read takes one of the offered points instead of a fresh stamp when it
// may: when the point follows, as a whole vector clock, the stamp of every
// gatekeeper's newest handed-off transaction (gatekeeper.Group.ReadPoint,
// gatekeeper.ChooseReadPoint; why whole clocks: docs/simulation.md, "Read
// points", and TestReadPointAfterPartialSync). A read registers the point
// it took and re-checks that no watermark pass overlapped its choice
// (TestReadPointBelowWatermark); shards refuse tasks below the watermark
// they collected all the same (shard.Shell.run).
