package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// POST /admin: the two GraphQL mutations of Dgraph's admin API that manage
// namespaces, for guardians of the galaxy:
//
//	mutation { addNamespace(input: {password: "mypass"}) { namespaceId message } }
//	mutation { deleteNamespace(input: {namespaceId: 1}) { namespaceId message } }
//
// The body is GraphQL text (application/graphql) or JSON {"query",
// "variables"}; arguments may be variables ($pw). Only enough GraphQL is
// parsed for these: one mutation operation whose fields are those two;
// anything else answers a GraphQL error naming what is supported. Answers
// are GraphQL's {"data": {...}} or {"errors": [{"message"}]}, with HTTP 200.

const adminSupported = "Weft's /admin serves only the mutations addNamespace(input: {password}) and " +
	"deleteNamespace(input: {namespaceId}), each selecting namespaceId and message"

// adminQueryBytesMax bounds the GraphQL text of one /admin request.
const adminQueryBytesMax = 64 << 10

func (s *Server) httpAdmin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, gqlErrors("/admin answers POST only"))
		return
	}
	body, err := s.readBody(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, gqlErrors(err.Error()))
		return
	}
	text, vars := string(body), map[string]any{}
	if mediaType(r) == "application/json" {
		var in struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		if err := dec.Decode(&in); err != nil {
			writeJSON(w, http.StatusOK, gqlErrors("while reading the GraphQL request: "+err.Error()))
			return
		}
		text = in.Query
		if in.Variables != nil {
			vars = in.Variables
		}
	}
	data, err := s.admin(r.Context(), r.Header.Get("X-Dgraph-AccessToken"), text, vars)
	if err != nil {
		writeJSON(w, http.StatusOK, gqlErrors(classify(err).Msg))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

func gqlErrors(msg string) map[string]any {
	return map[string]any{"errors": []map[string]any{{"message": msg}}}
}

// admin runs an /admin request for the holder of token.
func (s *Server) admin(ctx context.Context, token, text string, vars map[string]any) (map[string]any, error) {
	if len(text) > adminQueryBytesMax {
		return nil, errorf(CodeInvalid, "the GraphQL request has %d bytes, at most %d", len(text), adminQueryBytesMax)
	}
	fields, err := parseAdmin(text, vars)
	if err != nil {
		return nil, err
	}
	p, err := s.acl.authorize(token)
	if err != nil {
		return nil, err
	}
	data := map[string]any{}
	for _, f := range fields {
		res, err := s.adminField(ctx, p, f)
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		for _, sel := range f.sel {
			out[sel.key] = res[sel.name]
		}
		data[f.key] = out
	}
	return data, nil
}

func (s *Server) adminField(ctx context.Context, p principal, f gqlField) (map[string]any, error) {
	input, _ := f.args["input"].(map[string]any)
	if input == nil {
		return nil, errorf(CodeInvalid, "%s needs an argument input: {...}", f.name)
	}
	switch f.name {
	case "addNamespace":
		pw := ""
		if v, ok := input["password"]; ok {
			if pw, ok = v.(string); !ok {
				return nil, errorf(CodeInvalid, "addNamespace: input.password must be a string")
			}
		}
		ns, err := s.createNamespace(ctx, p, pw)
		if err != nil {
			return nil, err
		}
		return map[string]any{"namespaceId": ns, "message": "Created namespace successfully"}, nil
	case "deleteNamespace":
		ns, err := gqlUint(input["namespaceId"])
		if err != nil {
			return nil, errorf(CodeInvalid, "deleteNamespace: input.namespaceId: %v", err)
		}
		if err := s.deleteNamespace(ctx, p, ns); err != nil {
			return nil, err
		}
		return map[string]any{"namespaceId": ns, "message": "Deleted namespace successfully"}, nil
	}
	return nil, errorf(CodeInvalid, "%s", adminSupported)
}

// gqlUint reads a namespace id: an Int literal or a JSON number.
func gqlUint(v any) (uint64, error) {
	switch x := v.(type) {
	case int64:
		if x >= 0 {
			return uint64(x), nil
		}
	case uint64:
		return x, nil
	case json.Number:
		return strconv.ParseUint(x.String(), 10, 64)
	case float64:
		if x >= 0 && x == math.Trunc(x) && x < 1<<53 {
			return uint64(x), nil
		}
	case string:
		return strconv.ParseUint(x, 0, 64)
	case nil:
		return 0, fmt.Errorf("missing")
	}
	return 0, fmt.Errorf("%v is not a namespace id", v)
}

// gqlField is one field of the mutation: response key (alias or name),
// name, arguments (variables substituted) and selected subfields.
type gqlField struct {
	key, name string
	args      map[string]any
	sel       []gqlSel
}

type gqlSel struct{ key, name string }

// parseAdmin reads one GraphQL mutation operation made of addNamespace and
// deleteNamespace fields.
func parseAdmin(text string, vars map[string]any) ([]gqlField, error) {
	toks, err := gqlLex(text)
	if err != nil {
		return nil, errorf(CodeInvalid, "GraphQL syntax: %v", err)
	}
	p := &gqlParser{toks: toks, vars: vars}
	fields, err := p.document()
	if err != nil {
		return nil, errorf(CodeInvalid, "%v. %s", err, adminSupported)
	}
	return fields, nil
}

type gqlTok struct {
	kind byte // 'n' name, 's' string, 'i' int, 'p' punctuator
	text string
}

// gqlLex splits GraphQL text into names, strings, integers and punctuators.
func gqlLex(s string) ([]gqlTok, error) {
	var out []gqlTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out, i = append(out, gqlTok{'n', s[i:j]}), j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			out, i = append(out, gqlTok{'i', s[i:j]}), j
		case c == '"':
			str, n, err := gqlString(s[i:])
			if err != nil {
				return nil, err
			}
			out, i = append(out, gqlTok{'s', str}), i+n
		case strings.IndexByte("{}()[]:!$=@", c) >= 0:
			out, i = append(out, gqlTok{'p', s[i : i+1]}), i+1
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, fmt.Errorf("unexpected character %q at byte %d", r, i)
		}
	}
	return out, nil
}

// gqlString reads a quoted string at the start of s (JSON's escapes are
// GraphQL's) and returns it and the bytes it took.
func gqlString(s string) (string, int, error) {
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\n':
			return "", 0, fmt.Errorf("unterminated string")
		case '"':
			var out string
			if err := json.Unmarshal([]byte(s[:j+1]), &out); err != nil {
				return "", 0, fmt.Errorf("bad string %s: %v", s[:j+1], err)
			}
			return out, j + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

type gqlParser struct {
	toks  []gqlTok
	i     int
	vars  map[string]any
	depth int // of nested input objects, at most gqlDepthMax
}

// gqlDepthMax bounds the nesting of input objects.
const gqlDepthMax = 8

func (p *gqlParser) peek() gqlTok {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return gqlTok{}
}

func (p *gqlParser) next() gqlTok { t := p.peek(); p.i++; return t }

func (p *gqlParser) expect(punct string) error {
	if t := p.next(); t.kind != 'p' || t.text != punct {
		return fmt.Errorf("expected %q, found %q", punct, t.text)
	}
	return nil
}

func (p *gqlParser) document() ([]gqlField, error) {
	t := p.peek()
	if t.kind != 'n' || t.text != "mutation" {
		if t.kind == 'n' {
			return nil, fmt.Errorf("a %s operation", t.text)
		}
		return nil, fmt.Errorf("a query (the operation must be a mutation)")
	}
	p.next()
	if p.peek().kind == 'n' {
		p.next() // the operation's name
	}
	if t := p.peek(); t.kind == 'p' && t.text == "(" {
		if err := p.skipVarDefs(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []gqlField
	for {
		t := p.peek()
		if t.kind == 'p' && t.text == "}" {
			p.next()
			break
		}
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if p.i != len(p.toks) {
		return nil, fmt.Errorf("one operation per request (found %q after it)", p.peek().text)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("an empty mutation")
	}
	return out, nil
}

// skipVarDefs skips ($name: Type = default, ...): values come from the
// request's variables.
func (p *gqlParser) skipVarDefs() error {
	for depth := 0; p.i < len(p.toks); {
		t := p.next()
		if t.kind == 'p' && t.text == "(" {
			depth++
		}
		if t.kind == 'p' && t.text == ")" {
			if depth--; depth == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("unterminated variable definitions")
}

func (p *gqlParser) field() (gqlField, error) {
	t := p.next()
	if t.kind != 'n' {
		return gqlField{}, fmt.Errorf("expected a field, found %q", t.text)
	}
	f := gqlField{key: t.text, name: t.text}
	if n := p.peek(); n.kind == 'p' && n.text == ":" {
		p.next()
		if t = p.next(); t.kind != 'n' {
			return f, fmt.Errorf("expected a field after alias %s", f.key)
		}
		f.name = t.text
	}
	if f.name != "addNamespace" && f.name != "deleteNamespace" {
		return f, fmt.Errorf("the mutation %s", f.name)
	}
	if n := p.peek(); n.kind == 'p' && n.text == "(" {
		p.next()
		args, err := p.object(")")
		if err != nil {
			return f, err
		}
		f.args = args
	}
	if err := p.expect("{"); err != nil {
		return f, fmt.Errorf("%s needs a selection of namespaceId and message: %v", f.name, err)
	}
	for {
		t := p.next()
		if t.kind == 'p' && t.text == "}" {
			break
		}
		if t.kind != 'n' {
			return f, fmt.Errorf("expected a field of %s, found %q", f.name, t.text)
		}
		sel := gqlSel{key: t.text, name: t.text}
		if n := p.peek(); n.kind == 'p' && n.text == ":" {
			p.next()
			sel.name = p.next().text
		}
		if sel.name != "namespaceId" && sel.name != "message" {
			return f, fmt.Errorf("the field %s of %s (it has namespaceId and message)", sel.name, f.name)
		}
		f.sel = append(f.sel, sel)
	}
	if len(f.sel) == 0 {
		return f, fmt.Errorf("%s selects no field", f.name)
	}
	return f, nil
}

// object reads name: value pairs up to end.
func (p *gqlParser) object(end string) (map[string]any, error) {
	out := map[string]any{}
	for {
		t := p.next()
		if t.kind == 'p' && t.text == end {
			return out, nil
		}
		if t.kind != 'n' {
			return nil, fmt.Errorf("expected an argument name, found %q", t.text)
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out[t.text] = v
	}
}

func (p *gqlParser) value() (any, error) {
	t := p.next()
	switch {
	case t.kind == 's':
		return t.text, nil
	case t.kind == 'i':
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s: %v", t.text, err)
		}
		return n, nil
	case t.kind == 'p' && t.text == "$":
		name := p.next()
		v, ok := p.vars[name.text]
		if !ok {
			return nil, fmt.Errorf("variable $%s is not given", name.text)
		}
		return v, nil
	case t.kind == 'p' && t.text == "{":
		if p.depth++; p.depth > gqlDepthMax {
			return nil, fmt.Errorf("input objects nested deeper than %d", gqlDepthMax)
		}
		defer func() { p.depth-- }()
		return p.object("}")
	case t.kind == 'n' && (t.text == "true" || t.text == "false"):
		return t.text == "true", nil
	case t.kind == 'n' && t.text == "null":
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %q where a value is needed", t.text)
}
