package doctest

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\nb\n", "a\nc\n", false},
		{"a\nb", "a\nb\nc", false},
		{"a  \n", "a\n", true},
		{`{"snapshot":"{{snapshot}}"}`, `{"snapshot":"AQACAQM"}`, true},
		{`{"snapshot":"{{snapshot}}"}`, `{"token":"AQACAQM"}`, false},
		{"{\n...\n}", "{\n  x\n  y\n}", true},
		{"{\n...\n}", "{\n}", true},
		{"{\n...\n  z\n}", "{\n  x\n  y\n}", false},
		{"...\n  y\n...", "{\n  x\n  y\n}", true},
		{"a {{x}} b {{y}}", "a 1 b 2", true},
		{"a {{x}} b", "a 1\nb", false},
	} {
		if got := Match(c.want, c.got); got != c.ok {
			t.Errorf("Match(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

func TestParse(t *testing.T) {
	doc := "# t\n\n```sh\nnot run\n```\n\n```sh doctest\necho hi\n```\n\n```output\nhi\n```\n\n" +
		"text\n\n```python doctest\nprint(1)\n```\n\ntext\n\n```output\n1\n```\n"
	if _, err := Parse([]byte(doc)); err == nil {
		t.Fatal("an output block after text was accepted")
	}
	doc = "```sh doctest\necho hi\n```\n\n```output\nhi\n```\n\n- item\n\n  ```python doctest\n  print(1)\n  ```\n"
	bs, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Code != "echo hi\n" || !bs[0].HasWant || bs[0].Want != "hi\n" ||
		bs[1].Lang != Python || bs[1].Code != "print(1)\n" || bs[1].HasWant || bs[1].Line != 11 {
		t.Fatalf("Parse = %+v", bs)
	}
	if _, err := Parse([]byte("```go doctest\nx\n```\n")); err == nil {
		t.Fatal("a go block was accepted as runnable")
	}
}

func TestRunBlocksShellState(t *testing.T) {
	doc := "```sh doctest\nX=one\necho first\n```\n\n```output\nfirst\n```\n\n```sh doctest\ntrue\n```\n\n" +
		"```sh doctest\necho \"$X\"\n```\n\n```output\none\n```\n\n```sh doctest\nfalse\necho never\n```\n"
	rep, err := RunFile(t.Context(), []byte(doc), Env{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run != 4 || rep.Passed != 3 || rep.Results[3].Err == nil || rep.Results[3].Got != "" {
		t.Fatalf("report %+v", rep)
	}
}

func TestServeArgs(t *testing.T) {
	doc := "# x\n\n<!-- doctest serve: --dgraph-http $WEFT_DGRAPH_HTTP --keep-history -->\n"
	got := ServeArgs([]byte(doc), func(v string) string { return map[string]string{"WEFT_DGRAPH_HTTP": "127.0.0.1:1"}[v] })
	if strings.Join(got, " ") != "--dgraph-http 127.0.0.1:1 --keep-history" {
		t.Fatalf("ServeArgs = %q", got)
	}
	if ServeArgs([]byte("no directive"), nil) != nil {
		t.Fatal("args without a directive")
	}
}
