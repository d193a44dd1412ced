package rdf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r *Reader) (subjects []string, errs []error) {
	t.Helper()
	for {
		nq, err := r.Read()
		if err == io.EOF {
			return subjects, errs
		}
		if err != nil {
			errs = append(errs, err)
			var pe *Error
			if !errors.As(err, &pe) {
				return subjects, errs
			}
			continue
		}
		subjects = append(subjects, nq.Subject.Name)
	}
}

func TestReaderSkipsAndContinues(t *testing.T) {
	text := "# header\r\n" +
		"<a> <p> \"1\" .\r\n" +
		"\n" +
		"   \t\n" +
		"<b> <p> \"x\"^^<xs:int> .\n" + // line 5: a bad value, skipped
		"<c> <p> <d> . # trailing\n" +
		"<e> <p> <f> ." // no final newline
	r := NewReader(iotest.OneByteReader(strings.NewReader(text)))
	subjects, errs := readAll(t, r)
	if strings.Join(subjects, ",") != "a,c,e" {
		t.Errorf("subjects = %v; want a,c,e", subjects)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "rdf: line 5 col 9: ") || !errors.Is(errs[0], ErrValue) {
		t.Errorf("errors = %v; want one value error at line 5 col 9", errs)
	}
	if r.Line() != 7 || r.Offset() != int64(len(text)) {
		t.Errorf("Line, Offset = %d, %d; want 7, %d", r.Line(), r.Offset(), len(text))
	}
	if _, err := r.Read(); err != io.EOF {
		t.Errorf("Read after the end = %v; want io.EOF", err)
	}
}

// TestReaderLongLines: lines longer than the bufio buffer are assembled; a
// line longer than LineLenMax is an error and the reader goes on after it.
func TestReaderLongLines(t *testing.T) {
	long := `<a> <p> "` + strings.Repeat("x", 200<<10) + `" .`
	text := long + "\n<b> <p> <c> .\n" + long + "\n" + long
	r := NewReader(strings.NewReader(text))
	subjects, errs := readAll(t, r)
	if strings.Join(subjects, ",") != "a,b,a,a" || len(errs) != 0 {
		t.Fatalf("subjects %v, errors %v", subjects, errs)
	}
	r = NewReader(strings.NewReader(text))
	r.LineLenMax = 100 << 10
	subjects, errs = readAll(t, r)
	if strings.Join(subjects, ",") != "b" || len(errs) != 3 {
		t.Fatalf("with LineLenMax: subjects %v, errors %v", subjects, errs)
	}
	for i, line := range []string{"line 1 ", "line 3 ", "line 4 "} {
		if !strings.Contains(errs[i].Error(), line) || !strings.Contains(errs[i].Error(), "longer than") {
			t.Errorf("error %d = %v; want %q too long", i, errs[i], line)
		}
	}
}

func TestReaderIOError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("<a> <p> <c> .\n"), iotest.ErrReader(boom)))
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // sticky
		if _, err := r.Read(); !errors.Is(err, boom) {
			t.Fatalf("Read = %v; want boom", err)
		}
	}
}

func TestReaderAll(t *testing.T) {
	r := NewReader(strings.NewReader("<a> <p> <c> .\nbad\n<b> <p> <c> .\n"))
	var n, bad int
	for nq, err := range r.All() {
		if err != nil {
			bad++
			continue
		}
		n++
		_ = nq
	}
	if n != 2 || bad != 1 {
		t.Errorf("All: %d quads, %d errors; want 2, 1", n, bad)
	}
	r = NewReader(io.MultiReader(strings.NewReader("<a> <p> <c> .\n"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	n, bad = 0, 0
	for _, err := range r.All() {
		if err != nil {
			bad++
		} else {
			n++
		}
	}
	if n != 1 || bad != 1 {
		t.Errorf("All over a failing reader: %d quads, %d errors; want 1, 1", n, bad)
	}
}

func TestOpenGzipAndPlain(t *testing.T) {
	dir := t.TempDir()
	text := "<a> <p> \"x\"@en .\n_:b <p> <a> .\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	plain := filepath.Join(dir, "plain.rdf")
	zipped := filepath.Join(dir, "zipped.data") // detection by content, not name
	empty := filepath.Join(dir, "empty.rdf")
	for path, data := range map[string][]byte{plain: []byte(text), zipped: gz.Bytes(), empty: nil} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{plain, zipped, empty} {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		subjects, errs := readAll(t, NewReader(f))
		want := "a,b"
		if path == empty {
			want = ""
		}
		if strings.Join(subjects, ",") != want || len(errs) != 0 {
			t.Errorf("%s: subjects %v errors %v", path, subjects, errs)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 1}, 0o600)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("Open(truncated gzip) = %v", err)
	}
}
