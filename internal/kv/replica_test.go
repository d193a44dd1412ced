package kv

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

type recordHook struct {
	keys []string
	ats  []vclock.HVC
}

func (h *recordHook) Put(at vclock.HVC, key string, _ []byte) {
	h.keys = append(h.keys, key)
	h.ats = append(h.ats, at)
}

func testReplica(t *testing.T, fs vfs.FS, hook PutHook) *Replica {
	t.Helper()
	cfg := DefaultReplicaConfig()
	cfg.Dir, cfg.FS, cfg.Servers, cfg.Self, cfg.Hook = "r", fs, 3, 1, hook
	var now uint64
	cfg.Now = func() uint64 { now += 1000; return now }
	r, err := OpenReplica(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReplicaPutGetRestart(t *testing.T) {
	fs := vfs.NewMem()
	hook := &recordHook{}
	r := testReplica(t, fs, hook)
	a1, b1, a2 := sib(ver(1, 1), "a1"), sib(ver(2, 1), "b1"), sib(ver(1, 2, 2, 1), "a2")
	for _, s := range []kvcore.Sibling{a1, b1} {
		if o, _, err := r.Put("k", s, vclock.HVC{}); err != nil || o != kvcore.Applied {
			t.Fatalf("put %v: %s %v", s, o, err)
		}
	}
	if o, _, _ := r.Put("k", a1, vclock.HVC{}); o != kvcore.Duplicate {
		t.Fatalf("re-put: %s", o)
	}
	got, _, err := r.Get("k", vclock.HVC{})
	if err != nil || !sameSiblings(got, []kvcore.Sibling{a1, b1}) {
		t.Fatalf("get: %v %v", got, err)
	}
	if _, _, err := r.Put("k", a2, vclock.HVC{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Get("k", vclock.HVC{}); !errors.Is(err, kvcore.ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	r = testReplica(t, fs, nil)
	defer r.Close()
	got, _, err = r.Get("k", vclock.HVC{})
	if err != nil || !sameSiblings(got, []kvcore.Sibling{a2}) {
		t.Fatalf("after restart: %v %v", got, err)
	}
	if none, _, err := r.Get("absent", vclock.HVC{}); err != nil || len(none) != 0 {
		t.Fatalf("absent key: %v %v", none, err)
	}
	// The hook saw the three applied PUTs, not the duplicate, in HVC order.
	if len(hook.keys) != 3 {
		t.Fatalf("hook saw %d puts", len(hook.keys))
	}
	for i := 1; i < len(hook.ats); i++ {
		if vclock.CompareHVC(hook.ats[i-1], hook.ats[i]) != vclock.Before {
			t.Fatalf("hook stamps not increasing: %s, %s", hook.ats[i-1], hook.ats[i])
		}
	}
}

func TestReplicaRejectsBadInput(t *testing.T) {
	r := testReplica(t, vfs.NewMem(), nil)
	defer r.Close()
	for name, put := range map[string]func() error{
		"empty key":   func() error { _, _, err := r.Put("", sib(ver(1, 1), "x"), vclock.HVC{}); return err },
		"bad version": func() error { _, _, err := r.Put("k", sib(ver(1, 0), "x"), vclock.HVC{}); return err },
		"huge value": func() error {
			_, _, err := r.Put("k", kvcore.Sibling{Version: ver(1, 1), Value: make([]byte, 2<<20)}, vclock.HVC{})
			return err
		},
		"wrong clock": func() error {
			_, _, err := r.Put("k", sib(ver(1, 1), "x"), vclock.HVC{Entries: []uint64{1}, Epsilon: 10_000_000})
			return err
		},
	} {
		if err := put(); !errors.Is(err, kvcore.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if got, _, _ := r.Get("k", vclock.HVC{}); len(got) != 0 {
		t.Fatalf("bad input changed the store: %v", got)
	}
}

// TestReplicaCrashKeepsAcknowledgedPuts: with Sync, a crash that loses
// every unsynced byte keeps every PUT that returned.
func TestReplicaCrashKeepsAcknowledgedPuts(t *testing.T) {
	fs := vfs.NewCrashableMem()
	r := testReplica(t, fs, nil)
	const n = 200
	for i := range n {
		if _, _, err := r.Put(string(rune('a'+i%26))+string(rune('0'+i/26)), sib(ver(7, uint64(i+1)), "v"), vclock.HVC{}); err != nil {
			t.Fatal(err)
		}
	}
	img := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: rand.New(rand.NewPCG(1, 2))})
	r.Close()
	r2 := testReplica(t, img, nil)
	defer r2.Close()
	for i := range n {
		k := string(rune('a'+i%26)) + string(rune('0'+i/26))
		got, _, err := r2.Get(k, vclock.HVC{})
		if err != nil || len(got) != 1 || got[0].Version.Get(7) != uint64(i+1) {
			t.Fatalf("key %s after crash: %v %v", k, got, err)
		}
	}
}

// BenchmarkReplicaPut measures one replica's PUT (read, Apply, write with
// fsync, HVC stamp) on the OS file system.
func BenchmarkReplicaPut(b *testing.B) {
	cfg := DefaultReplicaConfig()
	cfg.Dir, cfg.Now = b.TempDir(), WallClock
	r, err := OpenReplica(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := r.Put("key", sib(ver(1, uint64(i+1)), "value"), vclock.HVC{}); err != nil {
			b.Fatal(err)
		}
	}
}
