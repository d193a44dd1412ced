package nodeprog

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/weft-db/weft/internal/value"
)

// The one-vertex programs answer most requests, and encoding/json's
// reflection costs more than the read behind them. Their result types
// append their JSON directly, byte for byte what json.Marshal gives
// (TestAppendJSONMatchesMarshal); an engine uses AppendJSON when a result
// implements JSONAppender.

// JSONAppender is a result that appends its own JSON encoding.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// appendString appends s as encoding/json does (HTML-safe escaping):
// plain printable ASCII directly, anything else through json.Marshal.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // strings always marshal
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendProps appends a property map with sorted keys, as json.Marshal.
func appendProps(dst []byte, props map[string]value.Value) ([]byte, error) {
	if props == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = value.AppendJSON(dst, props[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSON implements JSONAppender.
func (e EdgeView) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"handle":`...)
	dst = appendString(dst, e.Handle)
	dst = append(dst, `,"src":`...)
	dst = appendString(dst, e.Src)
	dst = append(dst, `,"dst":`...)
	dst = appendString(dst, e.Dst)
	if len(e.Props) > 0 {
		dst = append(dst, `,"props":`...)
		var err error
		if dst, err = appendProps(dst, e.Props); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendEdges(dst []byte, edges []EdgeView) ([]byte, error) {
	if edges == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, e := range edges {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = e.AppendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// AppendJSON implements JSONAppender.
func (l EdgeList) AppendJSON(dst []byte) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, 16+64*len(l.Edges)) // most edges encode in under 64 bytes
	}
	dst = append(dst, `{"edges":`...)
	dst, err := appendEdges(dst, l.Edges)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// AppendJSON implements JSONAppender.
func (c EdgeCount) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"count":`...)
	dst = strconv.AppendInt(dst, int64(c.Count), 10)
	return append(dst, '}'), nil
}

// AppendJSON implements JSONAppender.
func (n NodeView) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"handle":`...)
	dst = appendString(dst, n.Handle)
	if len(n.Props) > 0 {
		dst = append(dst, `,"props":`...)
		if dst, err = appendProps(dst, n.Props); err != nil {
			return nil, err
		}
	}
	if len(n.Edges) > 0 {
		dst = append(dst, `,"edges":`...)
		if dst, err = appendEdges(dst, n.Edges); err != nil {
			return nil, err
		}
	}
	if len(n.Aliases) > 0 {
		dst = append(dst, `,"aliases":[`...)
		for i, a := range n.Aliases {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, a)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// AppendJSON implements JSONAppender.
func (p NodeProps) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"node":`...)
	dst = appendString(dst, p.Node)
	dst = append(dst, `,"props":`...)
	dst, err := appendProps(dst, p.Props)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}
