package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Marker is the word that, after the language of a fence's info string,
// marks the block runnable.
const Marker = "doctest"

// Languages a runnable block may be written in.
const (
	Shell  = "sh"
	Python = "python"
)

// ServeDirective, on a line of its own, gives the server a file's blocks run
// against extra `weft serve` flags: <!-- doctest serve: --dgraph-http
// $WEFT_DGRAPH_HTTP -->. Only the WEFT_* address variables expand in it.
const ServeDirective = "<!-- doctest serve:"

// ServeArgs returns the extra serve flags of a document's directive, its
// $WEFT_… variables expanded by lookup.
func ServeArgs(src []byte, lookup func(string) string) []string {
	for line := range strings.Lines(string(src)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), ServeDirective)
		if !ok {
			continue
		}
		rest, _ = strings.CutSuffix(rest, "-->")
		var out []string
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "$"); ok && strings.HasPrefix(v, "WEFT_") {
				f = lookup(v)
			}
			out = append(out, f)
		}
		return out
	}
	return nil
}

// Block is one runnable code block and its expected output.
type Block struct {
	Lang string
	Line int // the line of the opening fence, counted from 1
	Code string
	// Want is the expected standard output; HasWant is false when the doc
	// gives none (the block must then only succeed).
	Want    string
	HasWant bool
}

// fence is one fenced block as read from the file.
type fence struct {
	info string
	line int
	body string
	// blankBefore is whether only blank lines separate it from the fence
	// before it.
	adjacent bool
}

// Parse extracts the runnable blocks of a Markdown document, in order.
func Parse(src []byte) ([]Block, error) {
	fences, err := fences(src)
	if err != nil {
		return nil, err
	}
	var out []Block
	for i := 0; i < len(fences); i++ {
		f := fences[i]
		lang, marked := runnable(f.info)
		if !marked {
			if f.info == "output" && (i == 0 || !isRunnable(fences[i-1].info) || !f.adjacent) {
				return nil, fmt.Errorf("line %d: an output block that follows no runnable block", f.line)
			}
			continue
		}
		if lang != Shell && lang != Python {
			return nil, fmt.Errorf("line %d: %q blocks cannot run (only %s and %s)", f.line, lang, Shell, Python)
		}
		b := Block{Lang: lang, Line: f.line, Code: f.body}
		if i+1 < len(fences) && fences[i+1].info == "output" && fences[i+1].adjacent {
			b.Want, b.HasWant = fences[i+1].body, true
			i++
		}
		out = append(out, b)
	}
	return out, nil
}

func isRunnable(info string) bool { _, ok := runnable(info); return ok }

// runnable reports a fence's language and whether it carries the marker.
func runnable(info string) (string, bool) {
	words := strings.Fields(info)
	if len(words) == 2 && words[1] == Marker {
		return words[0], true
	}
	return "", false
}

// fences reads the fenced blocks (``` or ~~~, three or more) of src.
func fences(src []byte) ([]fence, error) {
	var out []fence
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	var (
		open      *fence
		delim     string
		indent    int
		body      strings.Builder
		n         int
		sinceLast = -1 // non-blank lines since the last fence closed; -1 before any
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if open == nil {
			if d := fenceDelim(trimmed); d != "" && len(line)-len(trimmed) < 4 {
				open = &fence{info: strings.TrimSpace(trimmed[len(d):]), line: n, adjacent: sinceLast == 0}
				delim, indent = d, len(line)-len(trimmed)
				body.Reset()
				continue
			}
			if strings.TrimSpace(line) != "" && sinceLast >= 0 {
				sinceLast++
			}
			continue
		}
		if strings.HasPrefix(trimmed, delim) && strings.TrimSpace(trimmed[len(delim):]) == "" {
			open.body = body.String()
			out = append(out, *open)
			open, sinceLast = nil, 0
			continue
		}
		// Content keeps its indentation relative to the fence's.
		strip := min(indent, len(line)-len(strings.TrimLeft(line, " ")))
		body.WriteString(line[strip:])
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != nil {
		return nil, fmt.Errorf("line %d: a code block that is never closed", open.line)
	}
	return out, nil
}

// fenceDelim returns the opening delimiter a line starts with, if any.
func fenceDelim(s string) string {
	for _, c := range []byte{'`', '~'} {
		i := 0
		for i < len(s) && s[i] == c {
			i++
		}
		if i >= 3 {
			return s[:i]
		}
	}
	return ""
}
