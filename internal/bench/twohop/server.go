package twohop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/launch"
)

// server is the `weft serve` under test, a child process of the bench.
type server struct {
	child      *launch.Child
	grpc, http string
	dgraphHTTP string // the Dgraph face's HTTP address ("": off)
	dir        string
	removeDir  bool
}

// ticksPerSecond is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const ticksPerSecond = 100.0

// startServer starts bin serve on free loopback ports with its store in a
// fresh directory under dataDir ("" a temporary one, removed by close),
// with the Dgraph face's HTTP API when dgraph is set. prepare, if not nil,
// runs first with the directory and the store's path (to build the store).
func startServer(o *Options, dgraph bool, prepare func(dir, store string) error) (*server, error) {
	dir, remove := o.DataDir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "weft-bench-twohop-")
		if err != nil {
			return nil, err
		}
		dir, remove = d, true
	}
	addrs, err := launch.FreeAddrs(3, nil)
	if err != nil {
		return nil, err
	}
	s := &server{grpc: addrs[0], http: addrs[1], dir: dir, removeDir: remove}
	store := filepath.Join(dir, "serve")
	if prepare != nil {
		if err := prepare(dir, store); err != nil {
			s.close()
			return nil, err
		}
	}
	args := []string{"serve", "--data-dir", store, "--grpc-addr", s.grpc, "--http-addr", s.http}
	if dgraph {
		s.dgraphHTTP = addrs[2]
		args = append(args, "--dgraph-http", s.dgraphHTTP)
	}
	if o.InMemory {
		args = append(args, "--in-memory")
	}
	if o.ServerCPUProfile != "" {
		args = append(args, "--cpuprofile", o.ServerCPUProfile)
	}
	if o.Shards > 0 {
		args = append(args, "--shards", strconv.Itoa(o.Shards))
	}
	if o.Gatekeepers > 0 {
		args = append(args, "--gatekeepers", strconv.Itoa(o.Gatekeepers))
	}
	c, err := launch.NewChild(launch.ChildSpec{Name: "weft serve", Path: o.Bin, Args: args,
		Ready: "weft serving gRPC on", ReadyTimeout: 60 * time.Second, LogPath: filepath.Join(dir, "serve.log")})
	if err != nil {
		s.close()
		return nil, err
	}
	if err := c.Start(); err != nil {
		s.close()
		return nil, fmt.Errorf("bench: starting weft serve: %w", err)
	}
	s.child = c
	return s, nil
}

// cpu is the server process's CPU time so far: the sum of its threads'
// time on a CPU from /proc/PID/task/*/schedstat (nanoseconds; a Go
// program's threads live as long as it does), or, where that cannot be
// read, user+system time from /proc/PID/stat (10 ms ticks).
func (s *server) cpu() time.Duration { return processCPU(s.child.Pid()) }

// processCPU is process pid's CPU time so far (as server.cpu).
func processCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			sum = 0
			break
		}
		sum += ns
	}
	if sum > 0 {
		return time.Duration(sum)
	}
	return statCPU(pid)
}

// statCPU is user+system time from /proc/PID/stat, in 10 ms ticks.
func statCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command may hold spaces and parentheses: fields count from the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64) // field 14 of stat
	stime, _ := strconv.ParseFloat(f[12], 64) // field 15
	return time.Duration((utime + stime) / ticksPerSecond * float64(time.Second))
}

// rss is the server's resident set in bytes, from /proc/PID/status.
func (s *server) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.child.Pid()))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (s *server) close() {
	if s.child != nil {
		_ = s.child.Stop(10 * time.Second)
	}
	if s.removeDir {
		_ = os.RemoveAll(s.dir)
	}
}
