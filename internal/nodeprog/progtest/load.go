package progtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/value"
)

// LoadEdgeList reads a whitespace-separated edge list ("src dst" or "src dst
// weight", '#' comments) into g. Edge i (0-based, in file order) gets handle
// "e<i>"; a third column becomes the int property weightKey. Vertex handles
// are the ids as written.
func LoadEdgeList(g *Graph, path, weightKey string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ReadEdgeList(g, f, path, weightKey)
}

// ReadEdgeList is LoadEdgeList from a reader; name labels errors.
func ReadEdgeList(g *Graph, r io.Reader, path, weightKey string) error {
	sc := bufio.NewScanner(r)
	n := 0
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 {
			return fmt.Errorf("%s:%d: want src dst [weight]", path, line)
		}
		var props Props
		if len(fields) >= 3 && weightKey != "" {
			w, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				return fmt.Errorf("%s:%d: weight: %v", path, line, err)
			}
			props = Props{weightKey: value.I64(w)}
		}
		g.AddEdge("e"+strconv.Itoa(n), fields[0], fields[1], props)
		n++
	}
	return sc.Err()
}

// LoadVertexList adds the vertex in the first column of every line (so
// isolated vertices exist too).
func LoadVertexList(g *Graph, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ReadVertexList(g, f)
}

// ReadVertexList is LoadVertexList from a reader.
func ReadVertexList(g *Graph, r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 && !strings.HasPrefix(fields[0], "#") {
			g.AddVertex(fields[0], nil)
		}
	}
	return sc.Err()
}
