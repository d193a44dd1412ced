package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

func fullState(n int) *State {
	st := &State{Binary: "/bin/weft", Started: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Epoch: 1714564800,
		Dgraph: true, DgraphPlacement: "predicate", NotStarted: []string{"1 x: later"}}
	for i := range n {
		st.Procs = append(st.Procs, &Proc{Name: fmt.Sprintf("shard-%d", i+1), Role: "shard", Index: i, Pid: 100 + i,
			Addr: fmt.Sprintf("127.0.0.1:%d", 13000+i), HTTPAddr: "127.0.0.1:14000", PeerAddr: "127.0.0.1:15000",
			DgraphHTTPAddr: "127.0.0.1:16000", DgraphGRPCAddr: "127.0.0.1:17000", DataDir: "/d", Log: "/l",
			Args: []string{"shard", "--name", fmt.Sprintf("shard-%d", i+1)}})
	}
	return st
}

func TestStateSaveLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of an empty directory: %v, want ErrNotExist", err)
	}
	want := fullState(3)
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load after Save:\n got %+v\nwant %+v", got, want)
	}
	if got.Proc("shard-2") == nil || got.Proc("shard-9") != nil || len(got.Of("shard")) != 3 || len(got.Of("coord")) != 0 {
		t.Fatal("Proc or Of")
	}
	if a := got.Addrs("shard"); len(a) != 3 || a[1] != "127.0.0.1:13001" {
		t.Fatalf("Addrs = %v", a)
	}
	// No temporary file is left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != StateFile && e.Name() != stateLock {
			t.Fatalf("left in the directory: %s", e.Name())
		}
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("Load of a broken file: no error")
	}
}

// SetPid rewrites one pid and keeps every other field; concurrent SetPids
// lose none of each other's.
func TestSetPid(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	orig := fullState(n)
	if err := orig.Save(dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = SetPid(dir, fmt.Sprintf("shard-%d", i+1), 9000+i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range orig.Procs {
		p.Pid = 9000 + i
	}
	if !reflect.DeepEqual(got, orig) {
		t.Fatalf("after SetPid:\n got %+v\nwant %+v", got, orig)
	}
	if err := SetPid(dir, "gatekeeper-1", 1); !errors.Is(err, ErrNoProc) {
		t.Fatalf("SetPid of an unknown name: %v, want ErrNoProc", err)
	}
}

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); err == nil {
		t.Fatal("a second LockDir while the first holds: no error")
	}
	unlock()
	unlock2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after unlock: %v", err)
	}
	unlock2()
}
