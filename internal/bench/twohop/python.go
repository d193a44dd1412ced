package twohop

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"time"
)

//go:embed driver.py
var driverPy string

// pythonIface is the Python client (package weft) over HTTP, one process
// per client (the interpreter's lock would serialise threads), each with
// its share of the queries.
func pythonIface(python, addr string, count bool) iface {
	return iface{name: ifaceName("python-http", count), count: count, run: func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error) {
		type proc struct {
			cmd   *exec.Cmd
			in    io.WriteCloser
			out   *bufio.Reader
			index []int
		}
		kind := "handles"
		if count {
			kind = "count"
		}
		var procs []*proc
		defer func() {
			for _, p := range procs {
				p.in.Close()
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}()
		for k := range min(clients, len(srcs)) {
			p := &proc{cmd: exec.CommandContext(ctx, python, "-c", driverPy, "http://"+addr, kind)}
			p.cmd.Stderr = os.Stderr
			var err error
			if p.in, err = p.cmd.StdinPipe(); err != nil {
				return cellRun{}, err
			}
			stdout, err := p.cmd.StdoutPipe()
			if err != nil {
				return cellRun{}, err
			}
			p.out = bufio.NewReaderSize(stdout, 1<<20)
			var handles []string
			for i := k; i < len(srcs); i += clients {
				p.index = append(p.index, i)
				handles = append(handles, Handle(srcs[i]))
			}
			if err := p.cmd.Start(); err != nil {
				return cellRun{}, fmt.Errorf("bench: starting %s: %w", python, err)
			}
			procs = append(procs, p)
			b, _ := json.Marshal(handles)
			if _, err := fmt.Fprintf(p.in, "%s\n", b); err != nil {
				return cellRun{}, err
			}
		}
		for _, p := range procs {
			line, err := p.out.ReadString('\n')
			if strings.TrimSpace(line) != "ready" {
				return cellRun{}, fmt.Errorf("bench: the Python client did not start (%v): %q", err, line)
			}
		}
		ready()
		for _, p := range procs {
			if _, err := io.WriteString(p.in, "go\n"); err != nil {
				return cellRun{}, err
			}
		}
		out := cellRun{got: make([]int, len(srcs)), latency: make([]time.Duration, len(srcs))}
		first, last := math.Inf(1), math.Inf(-1)
		for _, p := range procs {
			line, err := p.out.ReadString('\n')
			if err != nil {
				return cellRun{}, fmt.Errorf("bench: the Python client failed (its error above): %w", err)
			}
			var r struct {
				Start, End float64
				LatUS      []float64 `json:"lat_us"`
				Got        []int
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return cellRun{}, fmt.Errorf("bench: the Python client's report: %w: %.200s", err, line)
			}
			if len(r.Got) != len(p.index) || len(r.LatUS) != len(p.index) {
				return cellRun{}, errors.New("bench: the Python client answered a different number of queries")
			}
			for j, i := range p.index {
				out.got[i] = r.Got[j]
				out.latency[i] = time.Duration(r.LatUS[j] * float64(time.Microsecond))
			}
			first, last = min(first, r.Start), max(last, r.End)
		}
		out.wall = time.Duration((last - first) * float64(time.Second))
		return out, nil
	}}
}
