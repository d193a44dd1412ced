package doctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Env is where a file's blocks run.
type Env struct {
	// BinDir holds the weft binary; it is put first on PATH.
	BinDir string
	// Python is the interpreter python blocks run with (the client's venv).
	Python string
	// HTTP and GRPC are the server's addresses (host:port), given to the
	// blocks as WEFT_HTTP and WEFT_GRPC; Kronos is a free address for a
	// block to start `weft kronos` on (WEFT_KRONOS).
	HTTP, GRPC, Kronos string
	// DgraphHTTP and DgraphGRPC are addresses for the Dgraph face
	// (WEFT_DGRAPH_HTTP, WEFT_DGRAPH_GRPC), served when the file's
	// ServeDirective asks for them.
	DgraphHTTP, DgraphGRPC string
	// KVPeers is three free addresses, comma-separated, for a block that
	// starts a ring of `weft kv serve` (WEFT_KV_PEERS).
	KVPeers string
	// Dir is the blocks' working directory and holds the shell state.
	Dir string
	// BlockTimeout bounds one block. Default 60 s.
	BlockTimeout time.Duration
}

// Result is the outcome of one block.
type Result struct {
	Block
	Got, Stderr string
	// Err is why the block failed (nil when it passed).
	Err error
}

// Report counts a file's blocks.
type Report struct {
	Results     []Result
	Run, Passed int
}

// Vars returns the environment variables env gives the blocks, by name.
func (env Env) Vars() map[string]string {
	return map[string]string{"WEFT_HTTP": env.HTTP, "WEFT_GRPC": env.GRPC, "WEFT_KRONOS": env.Kronos,
		"WEFT_DGRAPH_HTTP": env.DgraphHTTP, "WEFT_DGRAPH_GRPC": env.DgraphGRPC, "WEFT_KV_PEERS": env.KVPeers}
}

// Failures returns the failed results.
func (r Report) Failures() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Err != nil {
			out = append(out, res)
		}
	}
	return out
}

// RunFile parses a Markdown document and runs its blocks in order.
func RunFile(ctx context.Context, src []byte, env Env) (Report, error) {
	blocks, err := Parse(src)
	if err != nil {
		return Report{}, err
	}
	return RunBlocks(ctx, blocks, env)
}

// RunBlocks runs blocks in order in env; a failed block does not stop the
// later ones (each is reported).
func RunBlocks(ctx context.Context, blocks []Block, env Env) (Report, error) {
	if env.BlockTimeout <= 0 {
		env.BlockTimeout = 60 * time.Second
	}
	sh, err := newShell(env.Dir)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	var groups []int
	// What a block starts in the background (a Kronos replica, say) lives
	// until the file's last block ran.
	defer func() {
		for _, g := range groups {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}()
	for _, b := range blocks {
		if b.Lang == Python && env.Python == "" {
			return rep, fmt.Errorf("doctest: line %d: a python block and no interpreter", b.Line)
		}
		res := env.run(ctx, sh, b, &groups)
		rep.Run++
		if res.Err == nil {
			rep.Passed++
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// run runs one block in its own process group, whose id it adds to groups.
func (env Env) run(ctx context.Context, sh *shell, b Block, groups *[]int) Result {
	ctx, cancel := context.WithTimeout(ctx, env.BlockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", sh.script(b.Code))
	if b.Lang == Python {
		cmd = exec.CommandContext(ctx, env.Python, "-c", b.Code)
	}
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = env.Dir, &stdout, &stderr
	cmd.Env = append(os.Environ(), "PATH="+env.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range env.Vars() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Start()
	if err == nil {
		*groups = append(*groups, cmd.Process.Pid)
		err = cmd.Wait()
	}
	res := Result{Block: b, Got: stdout.String(), Stderr: stderr.String()}
	switch {
	case err != nil:
		res.Err = fmt.Errorf("%s block at line %d: %v", b.Lang, b.Line, err)
	case b.HasWant && !Match(b.Want, res.Got):
		res.Err = fmt.Errorf("%s block at line %d: output does not match", b.Lang, b.Line)
	}
	return res
}

// shell carries a file's shell variables from block to block: each block
// sources the variables the earlier ones left and, on success, saves the
// ones it has that a fresh bash does not.
type shell struct {
	state, baseline string
}

func newShell(dir string) (*shell, error) {
	s := &shell{state: filepath.Join(dir, ".doctest-vars"), baseline: filepath.Join(dir, ".doctest-baseline")}
	out, err := exec.Command("bash", "-c", "compgen -v").Output()
	if err != nil {
		return nil, fmt.Errorf("doctest: bash: %v", err)
	}
	base := string(out) + "PATH\nWEFT_HTTP\nWEFT_GRPC\nWEFT_KRONOS\nWEFT_DGRAPH_HTTP\nWEFT_DGRAPH_GRPC\nWEFT_KV_PEERS\nPIPESTATUS\n"
	if err := os.WriteFile(s.baseline, []byte(base), 0o644); err != nil {
		return nil, err
	}
	return s, os.WriteFile(s.state, nil, 0o644)
}

func (s *shell) script(code string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "set -euo pipefail\nsource %q\n", s.state)
	// declare -p without names would print every variable: save none then.
	fmt.Fprintf(&b, "trap '__rc=$?; if [ $__rc = 0 ]; then __v=$(compgen -v | grep -vxF -f %q | grep -v -e ^__ -e ^BASH || true); "+
		"if [ -n \"$__v\" ]; then declare -p $__v > %q; else : > %q; fi; fi' EXIT\n",
		s.baseline, s.state, s.state)
	b.WriteString(code)
	return b.String()
}
