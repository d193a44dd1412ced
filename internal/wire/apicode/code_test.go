package apicode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// declared returns the Code constants declared in code.go, so a constant
// added without a row fails the tests below.
func declared(t *testing.T) []Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "code.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Code
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		for _, v := range vs.Values {
			lit, ok := v.(*ast.BasicLit)
			if !ok {
				t.Fatalf("a Code constant that is not a string literal: %T", v)
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Code(s))
		}
		return true
	})
	if len(out) < 10 {
		t.Fatalf("found %d Code constants in code.go", len(out))
	}
	return out
}

// Every constant but CodeOK has a row, and the table has no other rows.
func TestEveryCodeHasARow(t *testing.T) {
	consts := declared(t)
	for _, c := range consts {
		if c.Known() == (c == CodeOK) {
			t.Errorf("%s: Known() = %v", c, c.Known())
		}
	}
	for c := range table {
		if !slices.Contains(consts, c) {
			t.Errorf("table row %s has no constant", c)
		}
	}
}

// Every wire code but the unspecified zero is exactly one Code, spelled as
// the wire code; only HTTP-only codes share one.
func TestEveryWireCodeHasOneCode(t *testing.T) {
	for v, name := range pb.ErrorCode_name {
		e := pb.ErrorCode(v)
		var got []Code
		for c, r := range table {
			if r.pb == e && !r.httpOnly {
				got = append(got, c)
			}
		}
		switch {
		case e == pb.ErrorCode_ERROR_CODE_UNSPECIFIED:
			if len(got) != 0 {
				t.Errorf("the unspecified wire code is %v", got)
			}
		case len(got) != 1:
			t.Errorf("wire code %s is %d codes: %v", name, len(got), got)
		case string(got[0]) != name:
			t.Errorf("wire code %s is code %s", name, got[0])
		case FromPB(e) != got[0] || got[0].PB() != e:
			t.Errorf("%s: FromPB %s, PB %s", name, FromPB(e), got[0].PB())
		}
	}
	if got := FromPB(pb.ErrorCode(99)); got != "99" {
		t.Errorf("FromPB of an unknown wire code = %q", got)
	}
}

func TestRetryable(t *testing.T) {
	var got []Code
	for c := range table {
		if c.Retryable() {
			got = append(got, c)
		}
	}
	slices.Sort(got)
	if want := []Code{CodeAborted, CodeOverloaded, CodeSnapshotTooOld}; !slices.Equal(got, want) {
		t.Errorf("retryable codes %v, want %v", got, want)
	}
}

func TestUnknownCodes(t *testing.T) {
	if CodeOK.HTTPStatus() != 200 || Code("NOPE").HTTPStatus() != 500 {
		t.Error("HTTPStatus of OK or an unknown code")
	}
	for _, c := range []Code{CodeOK, "NOPE"} {
		if c.Known() || c.Retryable() || c.GRPC() != codes.Internal || c.PB() != pb.ErrorCode_INTERNAL {
			t.Errorf("%s: known %v, retryable %v, gRPC %v, wire %v", c, c.Known(), c.Retryable(), c.GRPC(), c.PB())
		}
	}
}

// docsRow matches a row of docs/api.md's error table: code, HTTP status,
// gRPC code, retryable.
var docsRow = regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d+)[^|]* \\| [^|]* \\| (yes|no)[^|]* \\|")

// docs/api.md §5 lists every code, with its HTTP status and whether it is
// retryable.
func TestDocsListEveryCode(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Code][]string{}
	for _, m := range docsRow.FindAllStringSubmatch(string(doc), -1) {
		rows[Code(m[1])] = m[2:]
	}
	if len(rows) == 0 {
		t.Fatal("docs/api.md has no error table")
	}
	for c, r := range table {
		d, ok := rows[c]
		if !ok {
			t.Errorf("docs/api.md lists no %s", c)
			continue
		}
		if d[0] != strconv.Itoa(r.http) || (d[1] == "yes") != r.retryable {
			t.Errorf("docs/api.md: %s is %s, retryable %s; the table says %d, %v", c, d[0], d[1], r.http, r.retryable)
		}
	}
	for c := range rows {
		if !c.Known() {
			t.Errorf("docs/api.md lists %s, which is no code", c)
		}
	}
}
