package api

import (
	"fmt"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// Conversions from Dgraph's wire mutations to DQL mutations.

// starAll is how Dgraph's NQuad messages spell the * of deletes.
const starAll = "_STAR_ALL"

// convertMutation turns one pb.Mutation (JSON, N-Quads text and NQuad
// messages, in that order, deletions before sets as everywhere) into a DQL
// mutation. i numbers the mutation in its request, to keep the blank nodes
// JSON invents for objects without "uid" apart.
func convertMutation(m *pb.Mutation, i int) (*dql.Mutation, error) {
	out := &dql.Mutation{}
	cond, err := dql.ParseCond(m.Cond)
	if err != nil {
		return nil, fmt.Errorf("mutation %d: cond: %w", i+1, err)
	}
	out.Cond = cond
	add := func(dst *[]rdf.NQuad, quads []rdf.NQuad, err error, what string) error {
		if err != nil {
			return fmt.Errorf("mutation %d: %s: %w", i+1, what, err)
		}
		*dst = append(*dst, quads...)
		return nil
	}
	if len(m.DeleteJson) > 0 {
		q, err := dgraph.ParseJSON(m.DeleteJson, true)
		if err := add(&out.Delete, renameJSONBlanks(q, i), err, "delete_json"); err != nil {
			return nil, err
		}
	}
	if len(m.SetJson) > 0 {
		q, err := dgraph.ParseJSON(m.SetJson, false)
		if err := add(&out.Set, renameJSONBlanks(q, i), err, "set_json"); err != nil {
			return nil, err
		}
	}
	if len(m.DelNquads) > 0 {
		q, err := rdf.Parse(string(m.DelNquads))
		if err := add(&out.Delete, q, err, "del_nquads"); err != nil {
			return nil, err
		}
	}
	if len(m.SetNquads) > 0 {
		q, err := rdf.Parse(string(m.SetNquads))
		if err := add(&out.Set, q, err, "set_nquads"); err != nil {
			return nil, err
		}
	}
	for _, pair := range []struct {
		src  []*pb.NQuad
		dst  *[]rdf.NQuad
		what string
	}{{m.Del, &out.Delete, "del"}, {m.Set, &out.Set, "set"}} {
		for j, nq := range pair.src {
			q, err := convertNQuad(nq)
			if err != nil {
				return nil, fmt.Errorf("mutation %d: %s[%d]: %w", i+1, pair.what, j, err)
			}
			*pair.dst = append(*pair.dst, q)
		}
	}
	return out, nil
}

// renameJSONBlanks makes the blank nodes ParseJSON invents ("dg.N") unique
// across the mutations of a request.
func renameJSONBlanks(quads []rdf.NQuad, i int) []rdf.NQuad {
	if i == 0 {
		return quads
	}
	fix := func(t *rdf.Term) {
		if t.Kind == rdf.Blank && strings.HasPrefix(t.Name, "dg.") {
			t.Name = fmt.Sprintf("dg.%d.%s", i, t.Name[3:])
		}
	}
	for k := range quads {
		fix(&quads[k].Subject)
		fix(&quads[k].Object)
	}
	return quads
}

// nodeTerm reads a subject or object_id: _:blank, 0xUID, uid(var), or an XID.
func nodeTerm(s string) (rdf.Term, error) {
	switch {
	case s == "":
		return rdf.Term{}, fmt.Errorf("%w: empty node", dgraph.ErrInvalid)
	case strings.HasPrefix(s, "_:"):
		return rdf.Term{Kind: rdf.Blank, Name: s[2:]}, nil
	case strings.HasPrefix(s, "uid(") && strings.HasSuffix(s, ")"):
		return rdf.Term{Kind: rdf.UIDVar, Name: s[4 : len(s)-1]}, nil
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		u, err := dgraph.ParseUID(s)
		if err != nil {
			return rdf.Term{}, err
		}
		return rdf.Term{Kind: rdf.UID, UID: u}, nil
	}
	return rdf.Term{Kind: rdf.IRI, Name: s}, nil
}

// convertNQuad converts one NQuad message.
func convertNQuad(nq *pb.NQuad) (rdf.NQuad, error) {
	var out rdf.NQuad
	var err error
	if out.Subject, err = nodeTerm(nq.Subject); err != nil {
		return out, err
	}
	out.Predicate, out.Lang = nq.Predicate, nq.Lang
	if out.Predicate == starAll {
		out.Predicate = rdf.Star
	}
	if nq.ObjectId != "" {
		if out.Object, err = nodeTerm(nq.ObjectId); err != nil {
			return out, err
		}
	} else if out.Object, err = literalTerm(nq.ObjectValue); err != nil {
		return out, err
	}
	for _, f := range nq.Facets {
		v, err := facetValue(f)
		if err != nil {
			return out, err
		}
		out.Facets = append(out.Facets, rdf.Facet{Key: f.Key, Value: v})
	}
	return out, nil
}

func literalTerm(v *pb.Value) (rdf.Term, error) {
	lit := func(x value.Value, t rdf.Datatype) (rdf.Term, error) {
		return rdf.Term{Kind: rdf.Literal, Value: x, Datatype: t}, nil
	}
	if v == nil {
		return rdf.Term{}, fmt.Errorf("%w: an NQuad needs object_id or object_value", dgraph.ErrInvalid)
	}
	switch x := v.Val.(type) {
	case *pb.Value_DefaultVal:
		if x.DefaultVal == starAll {
			return rdf.Term{Kind: rdf.Wildcard}, nil
		}
		return lit(value.Str(x.DefaultVal), rdf.TypeDefault)
	case *pb.Value_StrVal:
		return lit(value.Str(x.StrVal), rdf.TypeString)
	case *pb.Value_IntVal:
		return lit(value.I64(x.IntVal), rdf.TypeInt)
	case *pb.Value_DoubleVal:
		return lit(value.F64(x.DoubleVal), rdf.TypeFloat)
	case *pb.Value_BoolVal:
		return lit(value.Boolean(x.BoolVal), rdf.TypeBool)
	case *pb.Value_PasswordVal:
		return lit(value.Str(x.PasswordVal), rdf.TypePassword)
	case *pb.Value_UidVal:
		return rdf.Term{Kind: rdf.UID, UID: x.UidVal}, nil
	case *pb.Value_DatetimeVal, *pb.Value_DateVal:
		var s string
		if d, ok := x.(*pb.Value_DatetimeVal); ok {
			s = string(d.DatetimeVal)
		} else {
			s = string(x.(*pb.Value_DateVal).DateVal)
		}
		t, err := rdf.ParseDatetime(s)
		if err != nil {
			return rdf.Term{}, fmt.Errorf("%w: datetime value %q (send RFC 3339 text): %v", dgraph.ErrInvalid, s, err)
		}
		return lit(value.Time(t), rdf.TypeDatetime)
	}
	return rdf.Term{}, fmt.Errorf("%w: NQuad value of type %T", dgraph.ErrUnsupported, v.Val)
}

func facetValue(f *pb.Facet) (value.Value, error) {
	s := string(f.Value)
	switch f.ValType {
	case pb.Facet_STRING:
		return value.Str(s), nil
	case pb.Facet_INT, pb.Facet_FLOAT, pb.Facet_BOOL, pb.Facet_DATETIME:
		// Dgraph sends these as binary encodings; accept their text too.
		v, err := rdf.FacetValue(s)
		if err != nil {
			return value.Value{}, fmt.Errorf("%w: facet %s: %v", dgraph.ErrInvalid, f.Key, err)
		}
		return v, nil
	}
	return value.Value{}, fmt.Errorf("%w: facet type %v", dgraph.ErrUnsupported, f.ValType)
}

// plainMutation turns a DQL mutation that uses no query variable into a
// dgraph.Mutation.
func plainMutation(m *dql.Mutation) (dgraph.Mutation, bool) {
	if m.Cond != nil || len(m.Uses()) > 0 {
		return dgraph.Mutation{}, false
	}
	return dgraph.Mutation{Set: m.Set, Del: m.Delete}, true
}

// fieldsN splits the start of s into at most n words, splitting after a
// '{' too ("{set{" gives "{", "set{"), enough to tell a mutation block.
func fieldsN(s string, n int) []string {
	var out []string
	i := 0
	for len(out) < n {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		if s[j] == '{' {
			j++
		} else {
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' && s[j] != '{' {
				j++
			}
			if j < len(s) && s[j] == '{' {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}
