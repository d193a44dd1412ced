package kv

import (
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/kv/kvcore"
)

// CutSource is what choosing a rollback cut asks of each server: the
// writes it applied at or after a time, and which of some writes it applied
// before it (and when). *Replica is one; the watcher asks kv servers over
// HTTP (/v1/kv/admin/late and /early) through another, and the
// deterministic simulation asks its replicas directly, so both run the same
// ChooseCut.
type CutSource interface {
	LateVersions(before uint64) ([]kvcore.Version, error)
	EarlyVersions(before uint64, versions []kvcore.Version) ([]kvcore.Version, []uint64, error)
}

var _ CutSource = (*Replica)(nil)

// ChooseCut chooses the rollback cut T for a violation that began no
// earlier than since, and the writes that straddle T. Writes applied at or
// after since on some replica but before it on another took effect before
// since, so a rollback to since would keep them — and if one of them began
// the violating state (its home replica, which the monitors watch, applied
// it late), the violation would survive the rollback. So the cut moves back
// once, to the earliest such early application, T; the writes that straddle
// T (in flight at T, before the violation) are kept everywhere they
// arrived. T ≤ since always.
func ChooseCut(srcs []CutSource, since uint64) (uint64, []kvcore.Version, error) {
	_, at, err := straddlers(srcs, since)
	if err != nil || len(at) == 0 {
		return since, nil, err
	}
	t := slices.Min(at)
	keep, _, err := straddlers(srcs, t)
	return t, keep, err
}

// straddlers returns the writes some replica applied at or after t and
// another before it, with the earliest CutTime of those early applications.
func straddlers(srcs []CutSource, t uint64) ([]kvcore.Version, []uint64, error) {
	seen := map[string]bool{}
	var late []kvcore.Version
	for i, s := range srcs {
		vs, err := s.LateVersions(t)
		if err != nil {
			return nil, nil, fmt.Errorf("server %d: %w", i, err)
		}
		for _, v := range vs {
			if !seen[v.String()] {
				seen[v.String()] = true
				late = append(late, v)
			}
		}
	}
	if len(late) == 0 {
		return nil, nil, nil
	}
	first := map[string]int{}
	var keep []kvcore.Version
	var at []uint64
	for i, s := range srcs {
		vs, cts, err := s.EarlyVersions(t, late)
		if err != nil {
			return nil, nil, fmt.Errorf("server %d: %w", i, err)
		}
		if len(cts) != len(vs) {
			return nil, nil, fmt.Errorf("%w: server %d answered %d versions and %d times", kvcore.ErrUnavailable, i, len(vs), len(cts))
		}
		for k, v := range vs {
			if j, ok := first[v.String()]; ok {
				at[j] = min(at[j], cts[k])
				continue
			}
			first[v.String()] = len(keep)
			keep, at = append(keep, v), append(at, cts[k])
		}
	}
	return keep, at, nil
}

// RestoreMonitored is one server's part of a rollback: Restore the replica
// to C(before) as generation gen, keeping keep, then, if det is set, start
// its detector over in gen from the restored values and the stamps of the
// writes that set them (so a violation that still holds is reported with
// its true start). The kv server's /v1/kv/admin/restore and the simulation
// both run it.
func RestoreMonitored(rep *Replica, det *Detector, before, gen uint64, keep []kvcore.Version) (RestoreResult, error) {
	res, err := rep.Restore(before, gen, keep)
	if err != nil || det == nil {
		return res, err
	}
	keys := det.Keys()
	vals, err := rep.Values(keys)
	if err != nil {
		return res, err
	}
	ats, err := rep.LastWrites(keys)
	if err != nil {
		return res, err
	}
	return res, det.Reset(gen, vals, ats)
}
