package pebble

import "sort"

// span is a scanned key range [start, end), or [start, ∞) when inf.
type span struct {
	start, end string
	inf        bool
}

func (s span) has(key string) bool {
	return key >= s.start && (s.inf || key < s.end)
}

// readSet records what a transaction read: point keys (found or not) and
// scanned spans. Not safe for concurrent use.
type readSet struct {
	points map[string]struct{}
	spans  []span
	bytes  int
}

// addPoint records key and returns the growth in bytes.
func (r *readSet) addPoint(key []byte) int {
	if _, ok := r.points[string(key)]; ok {
		return 0
	}
	if r.points == nil {
		r.points = make(map[string]struct{})
	}
	r.points[string(key)] = struct{}{}
	r.bytes += len(key)
	return len(key)
}

// addSpan records sp and returns the growth in bytes.
func (r *readSet) addSpan(sp span) int {
	r.spans = append(r.spans, sp)
	n := len(sp.start) + len(sp.end)
	r.bytes += n
	return n
}

func (r *readSet) empty() bool { return len(r.points) == 0 && len(r.spans) == 0 }

// hit returns a key of written (sorted) that r read, if any.
func (r *readSet) hit(written []string) (string, bool) {
	if len(r.points) > 0 {
		if len(written) <= len(r.points) {
			for _, k := range written {
				if _, ok := r.points[k]; ok {
					return k, true
				}
			}
		} else {
			for k := range r.points {
				if i := sort.SearchStrings(written, k); i < len(written) && written[i] == k {
					return k, true
				}
			}
		}
	}
	for _, sp := range r.spans {
		if i := sort.SearchStrings(written, sp.start); i < len(written) && sp.has(written[i]) {
			return written[i], true
		}
	}
	return "", false
}
