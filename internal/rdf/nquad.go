package rdf

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/value"
)

// Star is the wildcard of deletes: "<s> <p> * ." and "<s> * * .".
const Star = "*"

// PredType is Dgraph's type predicate; its objects are type names (literals).
const PredType = "dgraph.type"

// Kind says what a Term is.
type Kind uint8

const (
	// None is an absent term (a quad without a label).
	None Kind = iota
	// IRI is <iri>; Name holds the IRI with \u escapes decoded.
	IRI
	// Blank is _:name; Name holds the label without "_:".
	Blank
	// UID is a uid: <0x1f>, <31>, or a bare 0x1f subject; UID holds it.
	UID
	// UIDVar is uid(v) (subject or object); Name holds v.
	UIDVar
	// ValVar is val(v) (object only); Name holds v.
	ValVar
	// Wildcard is * (object only, in deletes).
	Wildcard
	// Literal is "..." (object only); Value and Datatype hold it.
	Literal
)

var kindNames = [...]string{"none", "iri", "blank", "uid", "uid-var", "val-var", "wildcard", "literal"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Term is a subject, an object or a label.
type Term struct {
	Kind     Kind
	Name     string      // IRI, Blank, UIDVar, ValVar
	UID      uint64      // UID
	Value    value.Value // Literal
	Datatype Datatype    // Literal: the declared datatype, TypeDefault when none
}

// Facet is one edge attribute. Value is a string, int, float, bool or
// datetime, typed as Dgraph types facets: "quoted" is a string, then an
// integer (strconv base 0), a float, true/false, a datetime; an empty value
// is the empty string.
type Facet struct {
	Key   string
	Value value.Value
}

// NQuad is one parsed statement.
type NQuad struct {
	Subject   Term   // IRI, Blank, UID or UIDVar
	Predicate string // an IRI, or Star
	Object    Term   // any kind but None
	Lang      string // from "..."@lang or a <pred@lang> predicate; "" when none
	Label     Term   // None, IRI or Blank
	Facets    []Facet
}

// Namespace reads the label as Dgraph does: a numeric label (strconv base 0)
// names the namespace. ok is false when there is no label or it is not a
// number.
func (nq NQuad) Namespace() (ns uint64, ok bool) {
	if nq.Label.Kind != IRI {
		return 0, false
	}
	ns, err := strconv.ParseUint(nq.Label.Name, 0, 64)
	return ns, err == nil
}

// Equal reports whether two terms are the same; literal values compare by
// kind and value.
func (t Term) Equal(o Term) bool {
	if t.Kind != o.Kind || t.Name != o.Name || t.UID != o.UID || t.Datatype != o.Datatype {
		return false
	}
	return valueIdentical(t.Value, o.Value)
}

func valueIdentical(a, b value.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	if a.Kind() == value.List {
		al, bl := a.List(), b.List()
		if len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !valueIdentical(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return a.IsNull() || value.Equal(a, b)
}

// Equal reports whether two quads are the same statement.
func (nq NQuad) Equal(o NQuad) bool {
	if !nq.Subject.Equal(o.Subject) || nq.Predicate != o.Predicate || !nq.Object.Equal(o.Object) ||
		nq.Lang != o.Lang || !nq.Label.Equal(o.Label) || len(nq.Facets) != len(o.Facets) {
		return false
	}
	for i, f := range nq.Facets {
		if f.Key != o.Facets[i].Key || !valueIdentical(f.Value, o.Facets[i].Value) {
			return false
		}
	}
	return true
}

// String renders the quad as one canonical N-Quads line (without a newline)
// that parses back to an equal quad.
func (nq NQuad) String() string {
	var b strings.Builder
	writeTerm(&b, nq.Subject)
	b.WriteByte(' ')
	// A language goes after an untyped literal; otherwise (a wildcard, a
	// typed literal) on the predicate, the <name@en> form Dgraph accepts.
	litLang := nq.Object.Kind == Literal && nq.Object.Datatype == TypeDefault
	switch {
	case nq.Predicate == Star:
		b.WriteString(Star)
	case nq.Lang != "" && !litLang:
		writeIRI(&b, nq.Predicate+"@"+nq.Lang)
	default:
		writeIRI(&b, nq.Predicate)
	}
	b.WriteByte(' ')
	writeTerm(&b, nq.Object)
	if nq.Lang != "" && litLang {
		b.WriteByte('@')
		b.WriteString(nq.Lang)
	}
	if nq.Label.Kind != None {
		b.WriteByte(' ')
		writeTerm(&b, nq.Label)
	}
	if len(nq.Facets) > 0 {
		b.WriteString(" (")
		for i, f := range nq.Facets {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Key)
			b.WriteByte('=')
			b.WriteString(formatFacetValue(f.Value))
		}
		b.WriteByte(')')
	}
	b.WriteString(" .")
	return b.String()
}

func writeTerm(b *strings.Builder, t Term) {
	switch t.Kind {
	case IRI:
		writeIRI(b, t.Name)
	case Blank:
		if validBlankLabel(t.Name) {
			b.WriteString("_:")
			b.WriteString(t.Name)
		} else { // from <_:...>, which Dgraph reads as a blank node too
			writeIRI(b, "_:"+t.Name)
		}
	case UID:
		b.WriteString("<0x")
		b.WriteString(strconv.FormatUint(t.UID, 16))
		b.WriteByte('>')
	case UIDVar:
		b.WriteString("uid(")
		b.WriteString(t.Name)
		b.WriteByte(')')
	case ValVar:
		b.WriteString("val(")
		b.WriteString(t.Name)
		b.WriteByte(')')
	case Wildcard:
		b.WriteString(Star)
	case Literal:
		writeQuoted(b, FormatValue(t.Value, t.Datatype))
		if t.Datatype != TypeDefault {
			b.WriteString("^^<")
			b.WriteString(t.Datatype.IRI())
			b.WriteByte('>')
		}
	}
}

// writeIRI writes <iri>, escaping what IRIREF does not allow as \u or \U.
func writeIRI(b *strings.Builder, s string) {
	b.WriteByte('<')
	for _, r := range s {
		if r < utf8.RuneSelf && iriBad[r] {
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('>')
}

const hexDigits = "0123456789ABCDEF"

// writeQuoted writes "s" with the escapes a literal needs.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
