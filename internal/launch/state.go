package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// StateFile is the launcher's record in a cluster's directory: every
// process it started, with pid, addresses and command line. `weft cluster
// status` and `down` read it, the fault harness and the scale bench too.
const StateFile = "cluster.json"

// stateLock serialises the writers of StateFile (Save, SetPid): a restart
// recording its pid while another does must not lose either.
const stateLock = StateFile + ".lock"

// Proc is one launched process, as the state file records it.
type Proc struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	Index int    `json:"index"`
	Pid   int    `json:"pid"`
	// Addr is the process's main address: a replica's raft and API
	// address, a shard's cluster protocol, a gatekeeper's Weft gRPC API.
	Addr string `json:"addr"`
	// HTTPAddr serves health and metrics (a gatekeeper's: its HTTP/JSON
	// API, which the fault mover's /v1/placement and /v1/move use).
	HTTPAddr string `json:"http_addr,omitempty"`
	// PeerAddr is a gatekeeper's cluster-protocol address.
	PeerAddr string `json:"peer_addr,omitempty"`
	// DgraphHTTPAddr and DgraphGRPCAddr are a gatekeeper's Dgraph APIs
	// (cluster up --dgraph).
	DgraphHTTPAddr string   `json:"dgraph_http_addr,omitempty"`
	DgraphGRPCAddr string   `json:"dgraph_grpc_addr,omitempty"`
	DataDir        string   `json:"data_dir"`
	Log            string   `json:"log"`
	Args           []string `json:"args"`
}

// Alive reports whether p's pid still runs p (Alive).
func (p *Proc) Alive() bool { return Alive(p.Pid, p.Args) }

// addrs are every address p holds (some empty).
func (p *Proc) addrs() []string {
	return []string{p.Addr, p.PeerAddr, p.HTTPAddr, p.DgraphHTTPAddr, p.DgraphGRPCAddr}
}

// State is the content of the state file.
type State struct {
	Binary  string    `json:"binary"`
	Started time.Time `json:"started"`
	// Epoch is the clock epoch base the gatekeepers and shards were given.
	Epoch uint64 `json:"epoch,omitempty"`
	// Dgraph and DgraphPlacement are up's --dgraph and --dgraph-placement
	// (cluster add gives a new gatekeeper the same).
	Dgraph          bool   `json:"dgraph,omitempty"`
	DgraphPlacement string `json:"dgraph_placement,omitempty"`
	// LogFormat is up's --log-format, given to every process (and to
	// those cluster add starts).
	LogFormat  string   `json:"log_format,omitempty"`
	Stopped    bool     `json:"stopped"`
	Procs      []*Proc  `json:"procs"`
	NotStarted []string `json:"not_started,omitempty"`
}

// Load reads dir's state file. A missing file is an error satisfying
// errors.Is(err, os.ErrNotExist).
func Load(dir string) (*State, error) {
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st := &State{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("launch: %s: %w", path, err)
	}
	return st, nil
}

// Save writes st as dir's state file, atomically: readers see the old
// file or the new one, never a part.
func (st *State) Save(dir string) error {
	unlock, err := lockFile(filepath.Join(dir, stateLock))
	if err != nil {
		return err
	}
	defer unlock()
	return st.write(dir)
}

func (st *State) write(dir string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, StateFile+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, StateFile))
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// ErrNoProc is returned by SetPid for a name the state file does not list.
var ErrNoProc = errors.New("launch: no such process in the state file")

// SetPid records pid as the process name's in dir's state file (a
// restart by someone other than the launcher), leaving the rest as it
// is, so that `weft cluster down` stops the new process too. It holds
// the state file's lock from read to write: concurrent SetPids and Saves
// lose no update.
func SetPid(dir, name string, pid int) error {
	unlock, err := lockFile(filepath.Join(dir, stateLock))
	if err != nil {
		return err
	}
	defer unlock()
	st, err := Load(dir)
	if err != nil {
		return err
	}
	p := st.Proc(name)
	if p == nil {
		return fmt.Errorf("%w: %q in %s", ErrNoProc, name, dir)
	}
	p.Pid = pid
	return st.write(dir)
}

// Proc returns the process named name (nil: none).
func (st *State) Proc(name string) *Proc {
	for _, p := range st.Procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Of returns the processes of role, in the state file's order.
func (st *State) Of(role string) []*Proc {
	var out []*Proc
	for _, p := range st.Procs {
		if p.Role == role {
			out = append(out, p)
		}
	}
	return out
}

// Addrs returns the main addresses (Proc.Addr) of role's processes.
func (st *State) Addrs(role string) []string {
	var out []string
	for _, p := range st.Of(role) {
		out = append(out, p.Addr)
	}
	return out
}

// used is every address the state's processes hold.
func (st *State) used() map[string]bool {
	used := map[string]bool{}
	for _, p := range st.Procs {
		for _, a := range p.addrs() {
			used[a] = true
		}
	}
	return used
}

// LockDir takes dir's launcher lock (cluster.lock), without waiting: one
// `weft cluster up` or `add` at a time per directory (two would share
// data directories and ports).
func LockDir(dir string) (unlock func(), err error) {
	lock, err := os.OpenFile(filepath.Join(dir, "cluster.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("another `weft cluster up` or `add` is running in %s: %w", dir, err)
	}
	return func() { lock.Close() }, nil
}

// lockFile takes an exclusive lock on path, waiting for it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("launch: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
