package exec

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/weft-db/weft/internal/value"
)

// object is one JSON object of the answer, keys in the order the query
// asked for them (Dgraph's order). Values are value.Value (scalars and
// lists of scalars), []*object (edges, blocks), *object (a shortest path
// step) or []any of those.
type object struct {
	uid   uint64 // the node it renders (0 for counts, groups and paths)
	keys  []string
	vals  []any
	alias []bool // the key was given by an alias (kept by @normalize)
	// hidden are keys present but not output: a uid predicate asked for
	// without braces (Dgraph prints nothing for it, but @cascade sees it).
	hidden []string
}

func (o *object) add(k string, v any, aliased bool) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	o.alias = append(o.alias, aliased)
}

func (o *object) has(k string) bool {
	for _, x := range o.keys {
		if x == k {
			return true
		}
	}
	for _, x := range o.hidden {
		if x == k {
			return true
		}
	}
	return false
}

func (o *object) get(k string) (any, bool) {
	for i, x := range o.keys {
		if x == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// clone copies o's key list (values are shared: they are never modified).
func (o *object) clone() *object {
	return &object{uid: o.uid, keys: append([]string(nil), o.keys...), vals: append([]any(nil), o.vals...),
		alias: append([]bool(nil), o.alias...), hidden: append([]string(nil), o.hidden...)}
}

// appendJSON renders v as Dgraph does.
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case *object:
		dst = append(dst, '{')
		for i, k := range v.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, v.vals[i])
		}
		return append(dst, '}')
	case []*object:
		dst = append(dst, '[')
		for i, o := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, o)
		}
		return append(dst, ']')
	case []any:
		dst = append(dst, '[')
		for i, o := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, o)
		}
		return append(dst, ']')
	case value.Value:
		return appendValue(dst, v)
	}
	return append(dst, "null"...)
}

// appendValue renders a scalar as Dgraph's JSON does: datetimes as RFC 3339
// strings, floats without a forced ".0", lists as arrays.
func appendValue(dst []byte, v value.Value) []byte {
	switch v.Kind() {
	case value.String:
		return appendString(dst, v.Str())
	case value.Int:
		return strconv.AppendInt(dst, v.Int(), 10)
	case value.Float:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	case value.Bool:
		return strconv.AppendBool(dst, v.Bool())
	case value.Datetime:
		return appendString(dst, v.Time().Format(time.RFC3339Nano))
	case value.List:
		dst = append(dst, '[')
		for i, e := range v.List() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// ignoreReflex returns o without the nodes reachable from themselves:
// along every path of the answer, a child that is one of its ancestors is
// dropped (@ignorereflex). Objects are shared between parents, so changed
// ones are copies.
func ignoreReflex(o *object, anc map[uint64]bool) *object {
	if o.uid != 0 {
		anc[o.uid] = true
		defer delete(anc, o.uid)
	}
	out := o
	for i, v := range o.vals {
		var nv any
		switch v := v.(type) {
		case []*object:
			var kept []*object
			for _, c := range v {
				if c.uid != 0 && anc[c.uid] {
					continue
				}
				kept = append(kept, ignoreReflex(c, anc))
			}
			nv = kept
		case *object:
			if v.uid != 0 && anc[v.uid] {
				nv = []*object(nil)
			} else {
				nv = ignoreReflex(v, anc)
			}
		default:
			continue
		}
		if out == o {
			out = o.clone()
		}
		out.vals[i] = nv
	}
	if out != o {
		out.dropEmptyLists()
	}
	return out
}

// dropEmptyLists removes keys whose list became empty.
func (o *object) dropEmptyLists() {
	k := 0
	for i := range o.keys {
		if l, ok := o.vals[i].([]*object); ok && len(l) == 0 {
			continue
		}
		o.keys[k], o.vals[k], o.alias[k] = o.keys[i], o.vals[i], o.alias[i]
		k++
	}
	o.keys, o.vals, o.alias = o.keys[:k], o.vals[:k], o.alias[:k]
}
