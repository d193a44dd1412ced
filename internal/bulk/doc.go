// Package bulk builds a new Weft store offline: an engine.API whose commits
// execute on an in-memory store (memkv.go) instead of going through
// gatekeepers, Kronos and shards, for `weft load --bulk` (the Dgraph report's offline
// loader, §3.2.3: each loader produces the store's RocksDB object with batch
// writes, and servers then serve it).
//
// # How it writes
//
// Commit runs the engine's own transaction logic (txn.Exec.Run) on the
// in-memory store, so every key and value is exactly what an online
// transaction would write: vertex records, edges and their in-edge index
// entries, properties, aliases, and the access stamps the gatekeeper's
// commit hook sets (gatekeeper.OrderAfterAccess). A failed Exec leaves
// nothing behind (its writes are undone from a log). Each commit gets the next
// stamp of gatekeeper 0 in epoch 1; Finish records epoch 1 and the shard
// count in the meta table, so the first engine.Open of the result starts
// epoch 2, every bulk stamp precedes every later one, and the shards rebuild
// from the store as at any Open (shard.Recover).
//
// The in-memory store keeps no Go pointer per entry (arena chunks, an
// open-addressing index), so the garbage collector does not walk it. When it
// holds MemBytesMax bytes it is sorted, written as one SSTable and ingested
// into Pebble (no WAL, no memtable), and memory starts empty: memory stays
// bounded by MemBytesMax, Pebble's block cache and the loader's own caches;
// older state is read back from Pebble. Finish writes the last table.
//
// # Atomic result
//
// Create refuses a directory that exists and is not empty, and builds the
// store in a sibling temporary directory; Finish renames it onto the target.
// Abort (or any failure) removes the temporary directory. So the target
// holds a complete store or nothing, even after kill -9 (which leaves only
// the temporary directory, named DIR.bulk-PID, to remove by hand).
//
// # Reads
//
// GetVertex, GetVertices and GetEdge answer from the latest state (every
// snapshot is "now"): a bulk load has one writer at a time, so reads made
// before a commit are still current when it validates them (Exec checks
// them as the engine does). Node programs (Run) are not available.
//
// # Concurrency
//
// DB is safe for concurrent use: reads share a lock that each commit takes
// exclusively. It is meant for one loader; more serialize on commits.
//
// # Direct writes
//
// A loader that builds the records itself (dgraph.LoadRDFDirect, the
// default of weft load --bulk for RDF) takes one stamp (DirectStamp) and
// writes through Tables (direct.go): one writer per goroutine, records in
// arena chunks; Close sorts them (multikey quicksort) and merges them into
// SSTables over disjoint key ranges, in parallel. Finish ingests them after
// the in-memory store's last table, so a direct record replaces a
// transactional one of the same key (the directory vertices' records). A key
// written twice fails the load; a writer whose memory is full writes its
// records early as an SSTable of its own (Stats.Overlapping).
//
// # Invariants
//
//   - The store holds exactly the writes of the committed transactions, in
//     commit order (no partial transaction).
//   - The target directory is touched only by Finish's rename.
package bulk
