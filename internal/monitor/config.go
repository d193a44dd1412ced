package monitor

import (
	"fmt"

	"github.com/weft-db/weft/internal/vclock"
)

// Config configures monitors (one per predicate, or a Set of them).
type Config struct {
	// Epsilon is ε, the assumed bound on clock synchronisation error, in the
	// unit of the HVCs' physical time (nanoseconds in Weft's shells). It must
	// equal the ε the servers' HybridClocks use, and should be a safe upper
	// bound on the real skew: the monitor never misses a violation that
	// happened in real time only while the skew is at most ε. Default 10 ms.
	// vclock.EpsilonInfinite orders no two candidates (every combination of
	// locally true states is reported).
	Epsilon uint64
	// QueueMax is the number of candidates a monitor buffers per server while
	// it waits for other servers' candidates. Default 4096.
	QueueMax int
	// ViolationsMax is the number of violations a monitor holds until Advance
	// takes them; Step refuses candidates (ErrOverloaded) while that many are
	// pending. One Step may overshoot by the violations it finds itself, at
	// most one per buffered candidate. Default 1024.
	ViolationsMax int
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Epsilon: 10_000_000, QueueMax: 4096, ViolationsMax: 1024}
}

// queueMaxLimit caps QueueMax so a mistyped config cannot reserve unbounded memory.
const queueMaxLimit = 1 << 24

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.QueueMax < 1 || c.QueueMax > queueMaxLimit {
		return fmt.Errorf("monitor: QueueMax %d not in [1, %d]", c.QueueMax, queueMaxLimit)
	}
	if c.ViolationsMax < 1 || c.ViolationsMax > queueMaxLimit {
		return fmt.Errorf("monitor: ViolationsMax %d not in [1, %d]", c.ViolationsMax, queueMaxLimit)
	}
	return nil
}

// epsilonLabel formats ε for messages.
func epsilonLabel(eps uint64) string {
	if eps == vclock.EpsilonInfinite {
		return "∞"
	}
	return fmt.Sprint(eps)
}
