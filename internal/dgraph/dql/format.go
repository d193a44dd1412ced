package dql

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/rdf"
)

// String renders the query as canonical DQL text, two spaces per level,
// that Parse reads back to an equal Query. GraphQL variables appear as
// their values and fragments expanded.
func (q *Query) String() string {
	var w writer
	w.query(q, 0)
	return w.String()
}

// String renders the mutation request as canonical text that
// ParseMutation reads back to an equal Upsert.
func (u *Upsert) String() string {
	var w writer
	if u.Query == nil {
		w.WriteString("{\n")
		for _, m := range u.Mutations {
			w.mutationOps(m, 1)
		}
		w.WriteString("}\n")
		return w.String()
	}
	w.WriteString("upsert {\n")
	w.indent(1)
	w.query(u.Query, 1)
	for _, m := range u.Mutations {
		w.indent(1)
		w.WriteString("mutation")
		if m.Cond != nil {
			w.WriteString(" @if(")
			w.filter(m.Cond, 0)
			w.WriteString(")")
		}
		w.WriteString(" {\n")
		w.mutationOps(m, 2)
		w.indent(1)
		w.WriteString("}\n")
	}
	w.WriteString("}\n")
	return w.String()
}

// String renders a filter expression (without @filter).
func (f *Filter) String() string {
	var w writer
	w.filter(f, 0)
	return w.String()
}

// String renders a function call.
func (f *Func) String() string {
	var w writer
	w.fn(f)
	return w.String()
}

// String renders a math expression.
func (m *Math) String() string {
	var w writer
	w.math(m, 0, false)
	return w.String()
}

type writer struct{ strings.Builder }

func (w *writer) indent(level int) {
	for range level {
		w.WriteString("  ")
	}
}

func (w *writer) query(q *Query, level int) {
	if q.Schema != nil {
		w.schema(q.Schema, level)
		return
	}
	switch {
	case q.Name != "":
		w.WriteString("query " + q.Name + " {\n")
	case level > 0:
		w.WriteString("query {\n")
	default:
		w.WriteString("{\n")
	}
	for _, b := range q.Blocks {
		w.block(b, level+1)
	}
	w.indent(level)
	w.WriteString("}\n")
}

func (w *writer) schema(s *SchemaQuery, level int) {
	w.WriteString("schema")
	switch {
	case s.Preds != nil:
		w.WriteString("(pred: ")
		w.nameList(s.Preds)
		w.WriteString(")")
	case s.Types != nil:
		w.WriteString("(type: ")
		w.nameList(s.Types)
		w.WriteString(")")
	}
	w.WriteString(" {\n")
	for _, f := range s.Fields {
		w.indent(level + 1)
		w.WriteString(formatName(f) + "\n")
	}
	w.indent(level)
	w.WriteString("}\n")
}

func (w *writer) nameList(names []string) {
	w.WriteString("[")
	for i, n := range names {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(formatName(n))
	}
	w.WriteString("]")
}

func (w *writer) block(b *Block, level int) {
	w.indent(level)
	if b.Var != "" {
		w.WriteString(b.Var + " as ")
	}
	w.WriteString(formatName(b.Name) + "(")
	var args []string
	if b.Func != nil {
		args = append(args, "func: "+b.Func.String())
	}
	if s := b.Shortest; s != nil {
		args = append(args, "from: "+s.From.String(), "to: "+s.To.String())
		args = appendInt(args, "numpaths", s.NumPaths)
		args = appendInt(args, "depth", s.Depth)
		args = appendFloat(args, "minweight", s.MinWeight)
		args = appendFloat(args, "maxweight", s.MaxWeight)
		args = appendInt(args, "maxfrontiersize", s.MaxFrontierSize)
	}
	args = append(args, selectionArgs(&b.Selection)...)
	w.WriteString(strings.Join(args, ", ") + ")")
	if b.Filter != nil {
		w.WriteString(" @filter(")
		w.filter(b.Filter, 0)
		w.WriteString(")")
	}
	if r := b.Recurse; r != nil {
		w.WriteString(" @recurse")
		var ra []string
		if r.Depth > 0 {
			ra = append(ra, "depth: "+strconv.FormatUint(r.Depth, 10))
		}
		if r.Loop {
			ra = append(ra, "loop: true")
		}
		if len(ra) > 0 {
			w.WriteString("(" + strings.Join(ra, ", ") + ")")
		}
	}
	w.selectionDirectives(&b.Selection)
	if b.IgnoreReflex {
		w.WriteString(" @ignorereflex")
	}
	w.WriteString(" {\n")
	w.fields(b.Fields, level+1)
	w.indent(level)
	w.WriteString("}\n")
}

// String renders a node reference: 0x1f or uid(v).
func (r UIDRef) String() string {
	if r.Var != "" {
		return "uid(" + r.Var + ")"
	}
	return "0x" + strconv.FormatUint(r.UID, 16)
}

func appendInt(args []string, key string, v *int64) []string {
	if v == nil {
		return args
	}
	return append(args, key+": "+strconv.FormatInt(*v, 10))
}

func appendFloat(args []string, key string, v *float64) []string {
	if v == nil {
		return args
	}
	return append(args, key+": "+formatFloat(*v))
}

// formatFloat renders a float that reads back as a float (with a '.' or an
// exponent).
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func selectionArgs(s *Selection) []string {
	var args []string
	for _, o := range s.Order {
		key := "orderasc: "
		if o.Desc {
			key = "orderdesc: "
		}
		if o.Var != "" {
			args = append(args, key+"val("+o.Var+")")
		} else {
			args = append(args, key+formatName(o.Attr)+langSuffix(o.Langs))
		}
	}
	args = appendInt(args, "first", s.Page.First)
	args = appendInt(args, "offset", s.Page.Offset)
	if s.Page.After != nil {
		args = append(args, "after: 0x"+strconv.FormatUint(*s.Page.After, 16))
	}
	return args
}

func langSuffix(langs []string) string {
	if len(langs) == 0 {
		return ""
	}
	return "@" + strings.Join(langs, ":")
}

func (w *writer) selectionDirectives(s *Selection) {
	if s.GroupBy != nil {
		w.WriteString(" @groupby(")
		for i, g := range s.GroupBy {
			if i > 0 {
				w.WriteString(", ")
			}
			if g.Alias != "" {
				w.WriteString(formatName(g.Alias) + ": ")
			}
			w.WriteString(formatName(g.Attr) + langSuffix(g.Langs))
		}
		w.WriteString(")")
	}
	if c := s.Cascade; c != nil {
		w.WriteString(" @cascade")
		if len(c.Fields) > 0 {
			w.WriteString("(")
			for i, f := range c.Fields {
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(formatName(f))
			}
			w.WriteString(")")
		}
	}
	if s.Normalize {
		w.WriteString(" @normalize")
	}
}

func (w *writer) fields(fields []*Field, level int) {
	for _, f := range fields {
		w.indent(level)
		w.field(f, level)
		w.WriteString("\n")
	}
}

// headKeywords read as field functions when a '(' follows them, so a
// predicate of that name with arguments renders as <name>.
var headKeywords = map[string]bool{"count": true, "val": true, "min": true, "max": true, "sum": true,
	"avg": true, "math": true, "expand": true, "checkpwd": true, "uid": true}

func (w *writer) field(f *Field, level int) {
	if f.Alias != "" {
		w.WriteString(formatName(f.Alias) + ": ")
	}
	if f.Var != "" {
		w.WriteString(f.Var + " as ")
	}
	switch f.Kind {
	case FieldPred:
		name := formatName(f.Attr)
		if headKeywords[strings.ToLower(f.Attr)] && len(selectionArgs(&f.Selection)) > 0 {
			name = "<" + f.Attr + ">"
		}
		w.WriteString(name + langSuffix(f.Langs))
		w.fieldTail(f)
	case FieldCount:
		w.WriteString("count(" + formatName(f.Attr) + langSuffix(f.Langs))
		w.fieldTail(f)
		w.WriteString(")")
	case FieldCountUID:
		w.WriteString("count(uid)")
	case FieldVal:
		w.WriteString("val(" + f.ValVar + ")")
	case FieldAgg:
		if f.ValVar != "" {
			w.WriteString(f.Agg + "(val(" + f.ValVar + "))")
		} else {
			w.WriteString(f.Agg + "(" + formatName(f.Attr) + langSuffix(f.Langs) + ")")
		}
	case FieldMath:
		w.WriteString("math(")
		w.math(f.Math, 0, false)
		w.WriteString(")")
	case FieldExpand:
		if f.ValVar != "" {
			w.WriteString("expand(val(" + f.ValVar + "))")
		} else {
			names := make([]string, len(f.Expand))
			for i, e := range f.Expand {
				names[i] = formatName(e)
			}
			w.WriteString("expand(" + strings.Join(names, ", ") + ")")
		}
		w.fieldTail(f)
	case FieldCheckpwd:
		w.WriteString("checkpwd(" + formatName(f.Attr) + ", " + strconv.Quote(f.Password) + ")")
	}
	if (f.Kind == FieldPred || f.Kind == FieldExpand) && len(f.Fields) > 0 {
		w.WriteString(" {\n")
		w.fields(f.Fields, level+1)
		w.indent(level)
		w.WriteString("}")
	}
}

// fieldTail renders a field's arguments and directives.
func (w *writer) fieldTail(f *Field) {
	if args := selectionArgs(&f.Selection); len(args) > 0 {
		w.WriteString(" (" + strings.Join(args, ", ") + ")")
	}
	if fc := f.Facets; fc != nil {
		w.WriteString(" @facets")
		if !fc.All {
			w.facets(fc)
		}
	}
	if f.FacetsFilter != nil {
		w.WriteString(" @facets(")
		w.filter(f.FacetsFilter, 0)
		w.WriteString(")")
	}
	if f.Filter != nil {
		w.WriteString(" @filter(")
		w.filter(f.Filter, 0)
		w.WriteString(")")
	}
	w.selectionDirectives(&f.Selection)
}

func (w *writer) facets(fc *Facets) {
	var items []string
	for _, k := range fc.Keys {
		s := ""
		if k.Alias != "" {
			s = formatName(k.Alias) + ": "
		}
		if k.Var != "" {
			s += k.Var + " as "
		}
		items = append(items, s+formatName(k.Key))
	}
	for _, o := range fc.Order {
		if o.Desc {
			items = append(items, "orderdesc: "+formatName(o.Key))
		} else {
			items = append(items, "orderasc: "+formatName(o.Key))
		}
	}
	w.WriteString("(" + strings.Join(items, ", ") + ")")
}

// filter renders f as an operand of parent (FilterFunc at the top): an OR
// under AND, and any AND or OR under NOT, needs parentheses.
func (w *writer) filter(f *Filter, parent FilterOp) {
	switch f.Op {
	case FilterFunc:
		w.fn(f.Func)
	case FilterNot:
		w.WriteString("NOT ")
		w.filter(f.Children[0], FilterNot)
	case FilterAnd, FilterOr:
		// Precedence: NOT > AND > OR.
		paren := parent == FilterNot || parent == FilterAnd && f.Op == FilterOr ||
			parent == f.Op
		if paren {
			w.WriteString("(")
		}
		sep := " AND "
		if f.Op == FilterOr {
			sep = " OR "
		}
		for i, c := range f.Children {
			if i > 0 {
				w.WriteString(sep)
			}
			w.filter(c, f.Op)
		}
		if paren {
			w.WriteString(")")
		}
	}
}

func (w *writer) fn(f *Func) {
	w.WriteString(f.Name + "(")
	var parts []string
	switch {
	case f.Name == "uid":
		parts = uidParts(f, false)
	case f.Name == "type":
	default:
		switch {
		case f.Count:
			parts = append(parts, "count("+formatName(f.Attr)+")")
		case f.ValVar != "":
			parts = append(parts, "val("+f.ValVar+")")
		case f.LenVar != "":
			parts = append(parts, "len("+f.LenVar+")")
		default:
			a := formatName(f.Attr)
			if f.Lang != "" {
				a += "@" + f.Lang
			}
			parts = append(parts, a)
		}
		if f.Name == "uid_in" {
			parts = append(parts, uidParts(f, true)...)
		}
	}
	for _, a := range f.Args {
		parts = append(parts, formatArg(a))
	}
	w.WriteString(strings.Join(parts, ", ") + ")")
}

func uidParts(f *Func, nested bool) []string {
	var parts []string
	for _, u := range f.UIDs {
		parts = append(parts, "0x"+strconv.FormatUint(u, 16))
	}
	for _, v := range f.Vars {
		if nested {
			parts = append(parts, "uid("+v+")")
		} else {
			parts = append(parts, v)
		}
	}
	return parts
}

func formatArg(a Arg) string {
	switch a.Kind {
	case ArgValVar:
		return "val(" + a.Value + ")"
	case ArgGeo:
		return a.Value
	case ArgRegex:
		var b strings.Builder
		b.WriteByte('/')
		for i := 0; i < len(a.Value); i++ {
			c := a.Value[i]
			switch {
			case c == '\\' && i+1 < len(a.Value):
				b.WriteByte(c)
				b.WriteByte(a.Value[i+1])
				i++
			case c == '/':
				b.WriteString(`\/`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('/')
		b.WriteString(a.Flags)
		return b.String()
	}
	if bareValue.MatchString(a.Value) {
		return a.Value
	}
	return strconv.Quote(a.Value)
}

// bareValue matches literals that render without quotes and read back as
// the same single word: numbers, uids, true, plain names.
var bareValue = regexp.MustCompile(`^([0-9][0-9A-Za-z_.]*|[A-Za-z_][A-Za-z0-9_.]*)$`)

// bareName matches names the lexer reads back as one name: words joined
// by single dashes.
var bareName = regexp.MustCompile(`^[A-Za-z0-9_~][A-Za-z0-9_.~]*(-[A-Za-z0-9_.~]+)*$`)

// formatName writes a name bare when it reads back as itself, else <name>.
func formatName(name string) string {
	if bareName.MatchString(name) && !strings.EqualFold(name, "as") {
		return name
	}
	return "<" + name + ">"
}

// math renders m; a binary operand of precedence lower than parent's, or
// equal on the right, needs parentheses (operators associate left).
func (w *writer) math(m *Math, parent int, right bool) {
	switch {
	case m.Var != "":
		w.WriteString(m.Var)
	case m.Const != nil:
		if m.Const.IsFloat {
			w.WriteString(formatFloat(m.Const.Float))
		} else {
			w.WriteString(strconv.FormatInt(m.Const.Int, 10))
		}
	case m.Op == mathOpNeg:
		w.WriteString("-")
		_, binary := mathBinary[m.Args[0].Op]
		if binary || m.Args[0].Const != nil {
			w.WriteString("(")
			w.math(m.Args[0], 0, false)
			w.WriteString(")")
		} else {
			w.math(m.Args[0], 0, false)
		}
	default:
		if prec, binary := mathBinary[m.Op]; binary {
			paren := prec < parent || prec == parent && right
			if paren {
				w.WriteString("(")
			}
			w.math(m.Args[0], prec, false)
			w.WriteString(" " + m.Op + " ")
			w.math(m.Args[1], prec, true)
			if paren {
				w.WriteString(")")
			}
			return
		}
		w.WriteString(m.Op + "(")
		for i, a := range m.Args {
			if i > 0 {
				w.WriteString(", ")
			}
			w.math(a, 0, false)
		}
		w.WriteString(")")
	}
}

func (w *writer) mutationOps(m *Mutation, level int) {
	for _, op := range []struct {
		name string
		nqs  []rdf.NQuad
	}{{"set", m.Set}, {"delete", m.Delete}} {
		if len(op.nqs) == 0 {
			continue
		}
		w.indent(level)
		w.WriteString(op.name + " {\n")
		for _, nq := range op.nqs {
			w.indent(level + 1)
			w.WriteString(nq.String() + "\n")
		}
		w.indent(level)
		w.WriteString("}\n")
	}
}
