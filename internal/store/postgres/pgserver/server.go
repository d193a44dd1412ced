package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-db/weft/internal/launch"
)

// EnvURL names the variable pointing the tests at an existing server.
const EnvURL = "WEFT_TEST_POSTGRES_URL"

// Superuser is the role initdb creates; connections need no password
// (trust authentication, loopback only).
const Superuser = "weft"

// ErrUnavailable means there are no PostgreSQL binaries and no way to
// install them here: tests skip.
var ErrUnavailable = errors.New("pgserver: PostgreSQL is not installed")

// Server is a PostgreSQL server run by this process, or an external one.
type Server struct {
	url  string
	bin  string // directory holding initdb and postgres; "" when external
	dir  string // data/, the socket, the logs
	port int
	keep bool                // Open's: Close keeps dir
	cred *syscall.Credential // the unprivileged user, when running as root

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// New runs initdb into a new temporary directory and starts the server.
// It returns ErrUnavailable (wrapped) when PostgreSQL is missing and cannot
// be installed.
func New() (*Server, error) {
	if url := os.Getenv(EnvURL); url != "" {
		return &Server{url: url}, nil
	}
	bin, err := binaries()
	if err != nil {
		return nil, err
	}
	sweep()
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return nil, err
		}
	}
	if s.dir, err = os.MkdirTemp("", "weft-pg-"); err != nil {
		return nil, err
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	for try := 0; ; try++ {
		if s.port, err = freePort(); err == nil {
			s.url = fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", Superuser, s.port)
			if err = s.Start(); err == nil {
				return s, nil
			}
		}
		// Another process may have taken the port between our probe
		// and the server's bind: try another.
		if try == 4 || !strings.Contains(s.Tail(20), "could not bind") {
			os.RemoveAll(s.dir)
			return nil, err
		}
	}
}

// Open runs PostgreSQL on the data in dir (initdb on first use) at
// 127.0.0.1:port, for a server that outlives one run (weft postgres). The
// directory is kept by Stop; Close removes nothing either.
func Open(dir string, port int) (*Server, error) {
	bin, err := binaries()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, port: port, keep: true,
		url: fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", Superuser, port)}
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return nil, err
		}
		if err := searchable(filepath.Dir(dir)); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		_ = os.RemoveAll(filepath.Join(dir, "data")) // a half-made cluster from an interrupted initdb
		if err := s.initdb(); err != nil {
			return nil, err
		}
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// searchable lets every user pass through dir and its ancestors (adding the
// others' execute bit where it is missing, never read or write), so the
// unprivileged user PostgreSQL runs as can reach a directory root chose.
func searchable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if m := fi.Mode().Perm(); m&0o001 == 0 {
			if err := os.Chmod(d, m|0o001); err != nil {
				return fmt.Errorf("pgserver: letting PostgreSQL's user reach %s: %w", d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// URL is the connection string of the server's "postgres" database.
func (s *Server) URL() string { return s.url }

// External reports whether the server was not started here (EnvURL): it
// cannot be crashed or restarted.
func (s *Server) External() bool { return s.bin == "" }

// Dir is the server's directory (data/ and logs); "" when external.
func (s *Server) Dir() string { return s.dir }

// Start starts the server on its directory and port (again, after Stop or
// Crash) and waits until it accepts connections.
func (s *Server) Start() error {
	if s.External() {
		return errors.New("pgserver: cannot start an external server")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgserver: server already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(filepath.Join(s.bin, "postgres"),
		"-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "full_page_writes=on",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB",
		"-c", "log_min_messages=warning", "-c", "log_min_error_statement=panic")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	if err := s.waitReady(exited); err != nil {
		s.killLocked(syscall.SIGKILL, 0)
		return err
	}
	return nil
}

// waitReady polls until a connection succeeds, the server exits, or 30s.
func (s *Server) waitReady(exited chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.url)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("pgserver: postgres exited before accepting connections:\n%s", s.Tail(20))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgserver: postgres not accepting connections after 30s: %v\n%s", err, s.Tail(20))
		}
	}
}

// Stop shuts the server down fast (SIGINT: clients are disconnected, a
// checkpoint is written), killing its process group after 15s.
func (s *Server) Stop() error { return s.signal(syscall.SIGINT, 15*time.Second) }

// Crash stops the server the way `pg_ctl stop -m immediate` does (SIGQUIT to
// the postmaster: every process exits at once, no checkpoint, crash
// recovery at the next start), then kills what is left of its process group.
func (s *Server) Crash() error { return s.signal(syscall.SIGQUIT, 10*time.Second) }

// Restart crashes the server and starts it again.
func (s *Server) Restart() error {
	if err := s.Crash(); err != nil {
		return err
	}
	return s.Start()
}

func (s *Server) signal(sig syscall.Signal, timeout time.Duration) error {
	if s.External() {
		return errors.New("pgserver: cannot stop an external server")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killLocked(sig, timeout)
}

// killLocked sends sig to the postmaster, waits up to timeout for it to
// exit, then SIGKILLs the whole process group (stragglers included).
func (s *Server) killLocked(sig syscall.Signal, timeout time.Duration) error {
	cmd, exited := s.cmd, s.exited
	if cmd == nil {
		return nil
	}
	s.cmd = nil
	pid := cmd.Process.Pid
	var err error
	if sig != syscall.SIGKILL {
		_ = syscall.Kill(pid, sig)
		select {
		case <-exited:
		case <-time.After(timeout):
			err = fmt.Errorf("pgserver: postgres ignored %v for %v: killed", sig, timeout)
		}
	}
	if kerr := syscall.Kill(-pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) && err == nil {
		err = kerr
	}
	<-exited
	return err
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	if s.External() {
		return nil
	}
	err := s.Stop()
	if s.keep {
		return err
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Tail returns the last n lines of the server's log.
func (s *Server) Tail(n int) string {
	b, err := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// initdb creates the cluster in s.dir/data as the unprivileged user.
func (s *Server) initdb() error {
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	// --no-sync for a throwaway cluster (the server itself runs with fsync
	// on, which is what the tests are about); a kept one syncs.
	args := []string{"-D", filepath.Join(s.dir, "data"), "-U", Superuser, "-A", "trust", "-E", "UTF8", "--locale=C"}
	if !s.keep {
		args = append(args, "--no-sync")
	}
	cmd := exec.Command(filepath.Join(s.bin, "initdb"), args...)
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgserver: initdb: %w\n%s", err, out)
	}
	return nil
}

// binaries returns the directory holding initdb and postgres, installing
// Debian's package when missing and possible.
func binaries() (string, error) {
	if dir := findBinaries(); dir != "" {
		return dir, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w (no /usr/lib/postgresql/*/bin/postgres) and this is not root: apt-get install postgresql", ErrUnavailable)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", fmt.Errorf("%w and there is no apt-get to install it", ErrUnavailable)
	}
	if err := install(); err != nil {
		return "", err // root with apt-get: failing to install is a failure, not a skip
	}
	if dir := findBinaries(); dir != "" {
		return dir, nil
	}
	return "", errors.New("pgserver: apt-get installed postgresql but no /usr/lib/postgresql/*/bin/postgres appeared")
}

// findBinaries returns the newest /usr/lib/postgresql/N/bin with initdb and
// postgres, or the directory pg_config names, or "".
func findBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// install runs apt-get install postgresql (apt-get update first if the
// package lists are stale), serialized across test binaries by a file lock.
func install() error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "weft-pgtest-apt.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if findBinaries() != "" {
		return nil // another test binary installed it while we waited
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	args := []string{"install", "-y", "--no-install-recommends", "postgresql"}
	if _, err := run(args...); err == nil {
		return nil
	}
	if out, err := run("update"); err != nil {
		return fmt.Errorf("pgserver: apt-get update: %w\n%s", err, out)
	}
	if out, err := run(args...); err != nil {
		return fmt.Errorf("pgserver: apt-get install postgresql: %w\n%s", err, out)
	}
	return nil
}

// unprivileged returns the credential of the user the server runs as when
// the tests run as root: "postgres", else "weftpg", created if need be.
func unprivileged() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("weftpg"); err != nil {
			out, cerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "weftpg").CombinedOutput()
			if cerr != nil {
				return nil, fmt.Errorf("pgserver: initdb refuses root and useradd weftpg failed: %w\n%s", cerr, bytes.TrimSpace(out))
			}
			if u, err = user.Lookup("weftpg"); err != nil {
				return nil, err
			}
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a loopback port for the server to bind.
func freePort() (int, error) { return launch.FreePort() }

// sweep removes the directories of servers whose test binary died without
// stopping them (a panic or a -timeout skips Main's cleanup; Pdeathsig
// killed the server itself): those whose postmaster is gone and which have
// not changed for ten minutes.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "weft-pg-*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(line); err == nil && syscall.Kill(pid, 0) == nil {
				continue // still running
			}
		}
		_ = os.RemoveAll(d)
	}
}
