package shard

import (
	"fmt"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// Scanner is the part of a store transaction recovery reads through.
type Scanner interface {
	Scan(start, end []byte, limit int, fn func(k, v []byte) error) error
}

// Partition is one shard's multi-version state: its graph partition and
// the aliases it owns.
type Partition struct {
	Graph *graph.Graph
	Alias *graph.AliasIndex
}

// Recover rebuilds shard partitions from the store (dissertation §4.6:
// shards restore their graph from the backing store); part gives the
// partition that owns a handle (a vertex, or an alias name). Everything is
// created at w, the epoch's start stamp, which precedes every stamp of the
// run; last-write stamps come from the store, so reads keep validating
// against it. A partition with a nil Graph (Alias) skips the vertex
// (alias): a shard process rebuilds only what it owns. The engine, the
// shard process and the simulator share it.
func Recover(t Scanner, w vclock.Stamp, part func(h string) Partition) error {
	return scanRecords(t, func(h string) bool { return part(h).Graph != nil }, func(h string) bool { return part(h).Alias != nil },
		func(rec *graph.VertexRecord) error { return part(rec.Handle).Graph.Load(rec, w) },
		func(a txn.AliasState) error { return part(a.Alias).Alias.Load(a.Alias, a.Handle, a.LastWrite, w) })
}

// ReadUnit reads placement unit u's vertices (tombstones included) and
// aliases from a store snapshot, as Recover would load them: a move's
// payload (txn.UnitMove). It scans every table (a move of many units should
// read them in one pass).
func ReadUnit(t Scanner, u txn.Unit, base uint32) (vs []*graph.VertexRecord, as []txn.AliasState, err error) {
	in := func(name string) bool { return txn.UnitOf(name, base) == u }
	if u.Group != "" {
		// A group's names share a prefix: scan only its keys.
		t = prefixScanner{t: t, prefix: txn.GroupName(u.Group, "")}
	}
	err = scanRecords(t, in, in,
		func(rec *graph.VertexRecord) error { vs = append(vs, rec); return nil },
		func(a txn.AliasState) error { as = append(as, a); return nil })
	return vs, as, err
}

// scanRecords reads the store's vertices whose handles keep accepts, with
// their properties, edges and aliases, and the alias records whose names
// keepAlias accepts, in key order: vertices first, then aliases.
func scanRecords(t Scanner, keep, keepAlias func(string) bool, vertex func(*graph.VertexRecord) error, alias func(txn.AliasState) error) error {
	recs := map[string]*graph.VertexRecord{}
	var order []string
	start, end := txn.VertexRange()
	if err := t.Scan(start, end, 0, func(k, v []byte) error {
		rec, err := txn.DecodeVertexRec(v)
		if err != nil {
			return err
		}
		h := string(k[1:])
		if !keep(h) {
			return nil // another shard's
		}
		recs[h] = &graph.VertexRecord{Handle: h, Deleted: !rec.Exists, LastWrite: rec.LastWrite}
		order = append(order, h)
		return nil
	}); err != nil {
		return err
	}
	if err := scanTable(t, 'P', func(parts []string, v []byte) error {
		val, _, err := value.Decode(v)
		if err != nil {
			return err
		}
		if r := recs[parts[0]]; r != nil && !r.Deleted {
			r.Props = append(r.Props, graph.Prop{Key: parts[1], Val: val})
		}
		return nil
	}); err != nil {
		return err
	}
	if err := scanTable(t, 'E', func(parts []string, v []byte) error {
		e, err := txn.DecodeEdgeRec(v)
		if err != nil {
			return err
		}
		er := graph.EdgeRecord{Handle: parts[1], Dst: e.Dst}
		for _, p := range e.Props {
			er.Props = append(er.Props, graph.Prop{Key: p.Key, Val: p.Value})
		}
		if r := recs[parts[0]]; r != nil && !r.Deleted {
			r.Edges = append(r.Edges, er)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := scanTable(t, 'W', func(parts []string, _ []byte) error {
		if r := recs[parts[0]]; r != nil && !r.Deleted {
			r.Aliases = append(r.Aliases, parts[1])
		}
		return nil
	}); err != nil {
		return err
	}
	for _, h := range order {
		if err := vertex(recs[h]); err != nil {
			return err
		}
		delete(recs, h)
	}
	return scanTable(t, 'A', func(parts []string, v []byte) error {
		a, err := txn.DecodeAliasRec(v)
		if err != nil {
			return err
		}
		if !keepAlias(parts[0]) {
			return nil // another shard's
		}
		return alias(txn.AliasState{Alias: parts[0], Handle: a.Handle, LastWrite: a.LastWrite})
	})
}

// scanTable scans every key of one table, split into its parts.
func scanTable(t Scanner, tag byte, fn func(parts []string, v []byte) error) error {
	return t.Scan([]byte{tag}, []byte{tag + 1}, 0, func(k, v []byte) error {
		if err := fn(txn.KeyParts(k), v); err != nil {
			return fmt.Errorf("store key %q: %w", k, err)
		}
		return nil
	})
}

// prefixScanner limits every table scan to the names starting with prefix
// (a placement group's: its handles and aliases start with it).
type prefixScanner struct {
	t      Scanner
	prefix string
}

func (p prefixScanner) Scan(start, end []byte, limit int, fn func(k, v []byte) error) error {
	if len(start) == 0 {
		return p.t.Scan(start, end, limit, fn)
	}
	lo := append([]byte{start[0]}, p.prefix...)
	hi := append([]byte{start[0]}, p.prefix...)
	hi[len(hi)-1]++ // the prefix ends in '|': the next byte bounds it
	if string(lo) < string(start) {
		lo = start
	}
	if end != nil && string(hi) > string(end) {
		hi = end
	}
	if string(lo) >= string(hi) {
		return nil
	}
	return p.t.Scan(lo, hi, limit, fn)
}
