package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

var (
	keyHardState = []byte("h")
	keySnapshot  = []byte("s")
	entryPrefix  = byte('e')
)

func entryKey(i uint64) []byte {
	k := make([]byte, 9)
	k[0] = entryPrefix
	binary.BigEndian.PutUint64(k[1:], i)
	return k
}

// Log is a Pebble-backed raft log.
type Log struct {
	db   *pebble.DB
	sync bool
	Mem  *raft.MemoryStorage
}

// Options configure Open.
type Options struct {
	Sync bool   // fsync every Save
	FS   vfs.FS // nil means the OS file system; simulations pass a crashable one
}

// Open opens (or creates) the log in dir and loads it into Mem.
func Open(dir string, o Options) (*Log, error) {
	po := &pebble.Options{Logger: quietPebble{}}
	if o.FS != nil {
		po.FS = o.FS
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("raftlog: open %s: %w", dir, err)
	}
	l := &Log{db: db, sync: o.Sync, Mem: raft.NewMemoryStorage()}
	if err := l.load(); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

func (l *Log) get(key []byte, m proto.Message) (bool, error) {
	v, c, err := l.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer c.Close()
	return true, proto.Unmarshal(v, m)
}

func (l *Log) load() error {
	snap := &raftpb.Snapshot{}
	if ok, err := l.get(keySnapshot, snap); err != nil {
		return fmt.Errorf("raftlog: snapshot: %w", err)
	} else if ok {
		if err := l.Mem.ApplySnapshot(snap); err != nil {
			return fmt.Errorf("raftlog: apply snapshot: %w", err)
		}
	}
	hs := &raftpb.HardState{}
	if ok, err := l.get(keyHardState, hs); err != nil {
		return fmt.Errorf("raftlog: hard state: %w", err)
	} else if ok {
		if err := l.Mem.SetHardState(hs); err != nil {
			return err
		}
	}
	first := snap.GetMetadata().GetIndex() + 1
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: entryKey(first), UpperBound: []byte{entryPrefix + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	var ents []*raftpb.Entry
	for it.First(); it.Valid(); it.Next() {
		e := &raftpb.Entry{}
		if err := proto.Unmarshal(it.Value(), e); err != nil {
			return fmt.Errorf("raftlog: entry: %w", err)
		}
		ents = append(ents, e)
	}
	if err := it.Error(); err != nil {
		return err
	}
	if len(ents) > 0 {
		if err := l.Mem.Append(ents); err != nil {
			return fmt.Errorf("raftlog: append loaded entries: %w", err)
		}
	}
	return nil
}

// Empty reports whether the log has never been written (a new replica).
func (l *Log) Empty() bool {
	hs, _, _ := l.Mem.InitialState()
	last, _ := l.Mem.LastIndex()
	return raft.IsEmptyHardState(hs) && last == 0
}

// Save persists a Ready's snapshot, entries and hard state in one batch, then
// applies them to Mem.
func (l *Log) Save(hs *raftpb.HardState, ents []*raftpb.Entry, snap *raftpb.Snapshot) error {
	b := l.db.NewBatch()
	defer b.Close()
	haveSnap := snap != nil && !raft.IsEmptySnap(snap)
	if haveSnap {
		if err := putProto(b, keySnapshot, snap); err != nil {
			return err
		}
		// Applying a snapshot discards the whole log (Mem keeps no entry
		// after it either): entries after it are from a divergent history.
		if err := b.DeleteRange(entryKey(0), []byte{entryPrefix + 1}, nil); err != nil {
			return err
		}
	}
	if last, old := l.tail(ents); !haveSnap && old > last {
		// A new leader overwrote a suffix: drop the stored entries after the
		// new tail. Only then: a range tombstone on every append piles up
		// overlapping tombstones that make Pebble's flushes quadratic, and
		// with them restarts (which flush the replayed WAL).
		if err := b.DeleteRange(entryKey(last+1), entryKey(old+1), nil); err != nil {
			return err
		}
	}
	for _, e := range ents {
		if err := putProto(b, entryKey(e.GetIndex()), e); err != nil {
			return err
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		if err := putProto(b, keyHardState, hs); err != nil {
			return err
		}
	}
	opt := pebble.NoSync
	if l.sync {
		opt = pebble.Sync
	}
	if err := b.Commit(opt); err != nil {
		return fmt.Errorf("raftlog: commit: %w", err)
	}
	if haveSnap {
		if err := l.Mem.ApplySnapshot(snap); err != nil {
			return err
		}
	}
	if len(ents) > 0 {
		if err := l.Mem.Append(ents); err != nil {
			return err
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		return l.Mem.SetHardState(hs)
	}
	return nil
}

// tail returns the index of the last of ents (0 if none) and of the last
// stored entry; Mem holds exactly the stored entries after the snapshot.
func (l *Log) tail(ents []*raftpb.Entry) (last, old uint64) {
	if len(ents) == 0 {
		return 0, 0
	}
	old, _ = l.Mem.LastIndex()
	return ents[len(ents)-1].GetIndex(), old
}

// Compact records a snapshot the state machine took at index and drops the
// entries before keep (entries after keep stay so slow followers can catch up
// without a snapshot).
func (l *Log) Compact(index uint64, cs *raftpb.ConfState, data []byte, keep uint64) error {
	snap, err := l.Mem.CreateSnapshot(index, cs, data)
	if err != nil {
		return err
	}
	b := l.db.NewBatch()
	defer b.Close()
	if err := putProto(b, keySnapshot, snap); err != nil {
		return err
	}
	cut := uint64(0)
	if index > keep {
		cut = index - keep
	}
	if err := b.DeleteRange(entryKey(0), entryKey(cut+1), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	if cut > 0 {
		if first, _ := l.Mem.FirstIndex(); cut >= first {
			return l.Mem.Compact(cut)
		}
	}
	return nil
}

func putProto(b *pebble.Batch, key []byte, m proto.Message) error {
	v, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	return b.Set(key, v, nil)
}

// Close closes the store.
func (l *Log) Close() error { return l.db.Close() }

// quietPebble drops Pebble's informational logs; failures surface as errors.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}
