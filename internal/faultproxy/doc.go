// Package faultproxy is a fault-injecting TCP proxy for real-process fault
// tests. A nemesis puts one Proxy on loopback in front of each listening weft
// process; clients and peer processes dial the proxy instead of the process,
// and the nemesis partitions, delays, throttles, clogs, refuses and resets
// their connections while the workload runs (Jepsen's network nemeses;
// FoundationDB's clogging and swizzle-clog).
//
// # Model
//
// Each accepted connection is dialled through to the target and carried by
// two pumps, Upstream (client → target) and Downstream (target → client),
// so every fault can be one-way. A pump's reader reads the source socket
// into a FIFO queue; its writer writes the queue to the destination socket,
// each chunk no earlier than its due time and only while the direction
// flows. End of stream is forwarded as a half-close (FIN), in order after
// the bytes before it; a read or write error resets the whole connection.
//
// # Faults
//
//   - Partition(dir): bytes in dir are held, not dropped: connections stay
//     open and nothing flows that way, as when packets are silently dropped
//     and TCP retransmits. A connection accepted during a partition (either
//     direction) is held before its dial, as a handshake would be.
//   - Heal(): ends the partition and every clog; held bytes are delivered in
//     order, as TCP delivers after retransmission succeeds.
//   - ResetAll(): resets every connection now (SO_LINGER 0, so both peers see
//     ECONNRESET); held bytes are discarded. Partition, ResetAll, Heal models
//     a partition long enough for TCP to give up.
//   - Delay(dir, d, jitter): each byte waits d plus a uniform draw from
//     [0, jitter] after it is read; bytes never overtake one another.
//   - Bandwidth(dir, bytesPerSec): per connection, in pieces of ~50ms.
//   - Refuse(on): new connections are reset at once (ECONNRESET, on connect
//     or on the first read or write, not ECONNREFUSED: the kernel completes
//     the handshake before the proxy sees the connection).
//   - Clog(d): every connection, both directions, held for d, then released.
//   - NewSwizzle(rng): clog a random subset of the open connections one at a
//     time, then unclog them in another random order; the plan depends only
//     on the connection ids and the seeded *rand.Rand passed in.
//
// A dial failure (the process behind the proxy is down) resets the client's
// connection. Delay jitter is drawn from a generator seeded by Config.Seed;
// the wall-clock interleaving of goroutines is not replayable, only the
// choices.
//
// # Limits
//
// Held bytes are bounded per connection and direction by HoldBytesMax; a
// full queue stops the reader, so the sender's kernel buffers fill and its
// writes block. Nothing grows without bound: ConnsMax bounds connections and
// ReadBytesMax a single read. Delay × throughput is therefore bounded too: a
// long delay on a fast stream throttles it, as a small TCP window would.
// Builds with -tags invariants recheck the whole queue on every queue
// operation: held bytes match the chunks and stay within HoldBytesMax, due
// times never go backwards and the FIN comes last.
//
// The proxy works on TCP byte streams, not packets: it cannot drop, duplicate
// or reorder individual packets or messages inside a stream, because TCP
// would repair or expose that. "Drop" is modelled as a partition (hold)
// followed by ResetAll. It sees only connections made through it: processes
// that talk to each other directly are not affected, and a fault hits a
// process pair only if the dialler uses the proxy's address.
//
// # Concurrency
//
// Every Proxy method is safe for concurrent use; fault changes take effect
// for bytes not yet written, wake every waiting pump at once, and are logged
// with Stats for test logs. A Swizzle is driven by one goroutine. Close
// resets every connection and returns only after every goroutine the proxy
// started has exited.
package faultproxy
