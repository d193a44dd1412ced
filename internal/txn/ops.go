package txn

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/value"
)

// Kind names one write operation.
type Kind uint8

const (
	CreateVertex Kind = iota + 1
	DeleteVertex
	CreateEdge
	DeleteEdge
	SetVertexProp
	DeleteVertexProp
	SetEdgeProp
	DeleteEdgeProp
	AddAlias
	RemoveAlias
)

var kindNames = [...]string{"", "create_vertex", "delete_vertex", "create_edge", "delete_edge",
	"set_vertex_prop", "delete_vertex_prop", "set_edge_prop", "delete_edge_prop", "add_alias", "remove_alias"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if i > 0 && n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// Op is one buffered write. Vertex names the vertex the operation is about (for
// edge operations, the edge's source, which owns it) by handle, or by alias when
// VertexAlias is set; Dst/DstAlias likewise name an edge's destination.
type Op struct {
	Kind        Kind
	Vertex      string
	VertexAlias bool
	Edge        string // edge handle (create_edge: empty = generated)
	Dst         string
	DstAlias    bool
	Key         string      // property key
	Value       value.Value // property value (set_*_prop)
	Alias       string      // add_alias / remove_alias; create_vertex: optional initial aliases use AddAlias ops
}

// Limits on one transaction and its names.
const (
	HandleLenMax = 512
	KeyLenMax    = 256
	OpsMax       = 10000
	ReadsMax     = 10000
	ValueLenMax  = 1 << 20 // encoded bytes of one property value
)

// Errors. ErrInvalid marks bad input: the transaction is rejected and nothing
// changes. ErrNotFound, ErrExists and ErrDeleted are also bad input (with the
// element named in the message); they are not retryable.
var (
	ErrInvalid  = errors.New("txn: invalid operation")
	ErrNotFound = errors.New("txn: not found")
	ErrExists   = errors.New("txn: already exists")
	ErrTooLarge = errors.New("txn: transaction too large")
)

// ValidName checks a handle, alias or property key.
func ValidName(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, what)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalid, what)
	}
	return nil
}

// Validate checks the shape of one operation (not the store's state).
func (o *Op) Validate() error {
	if o.Kind < CreateVertex || o.Kind > RemoveAlias {
		return fmt.Errorf("%w: unknown operation kind %d", ErrInvalid, o.Kind)
	}
	if o.Kind == CreateVertex && o.VertexAlias {
		return fmt.Errorf("%w: create_vertex names the new vertex by handle, not alias", ErrInvalid)
	}
	if !(o.Kind == CreateVertex && o.Vertex == "") { // empty handle: generated
		if err := ValidName("vertex", o.Vertex, HandleLenMax); err != nil {
			return err
		}
	}
	switch o.Kind {
	case CreateEdge:
		if o.Edge != "" {
			if err := ValidName("edge", o.Edge, HandleLenMax); err != nil {
				return err
			}
		}
		if err := ValidName("destination vertex", o.Dst, HandleLenMax); err != nil {
			return err
		}
	case DeleteEdge, SetEdgeProp, DeleteEdgeProp:
		if err := ValidName("edge", o.Edge, HandleLenMax); err != nil {
			return err
		}
	case AddAlias, RemoveAlias:
		if err := ValidName("alias", o.Alias, HandleLenMax); err != nil {
			return err
		}
	}
	switch o.Kind {
	case SetVertexProp, DeleteVertexProp, SetEdgeProp, DeleteEdgeProp:
		if err := ValidName("property key", o.Key, KeyLenMax); err != nil {
			return err
		}
	}
	if o.Kind == SetVertexProp || o.Kind == SetEdgeProp {
		if o.Value.IsNull() {
			return fmt.Errorf("%w: property %q set to null (use delete)", ErrInvalid, o.Key)
		}
		if n := len(value.Append(nil, o.Value)); n > ValueLenMax {
			return fmt.Errorf("%w: property %q value is %d bytes, more than %d", ErrInvalid, o.Key, n, ValueLenMax)
		}
	}
	return nil
}

// Read is one entry of a transaction's read set: the vertex (by handle) it read
// at its snapshot and the version it saw (the stamp of the vertex's last write,
// zero when it had never been written). Alias reads name the alias instead.
type Read struct {
	Vertex  string
	Alias   bool
	Version []byte // encoded stamp (EncodeStamp); empty = never written / absent
}
