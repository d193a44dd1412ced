package engineapi

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/txn"
)

// fakeAPI answers GetVertex from a map and counts the calls; the other
// methods are not called here.
type fakeAPI struct {
	mu    sync.Mutex
	calls int
	fail  string // a vertex whose read fails
}

var errFake = errors.New("fake: read failed")

func (f *fakeAPI) GetVertex(_ context.Context, _ Snapshot, v VertexRef, _ ReadOptions) (*Vertex, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if v.Name == f.fail {
		return nil, errFake
	}
	return &Vertex{Handle: v.Name, Exists: v.Name != "missing"}, nil
}

func (f *fakeAPI) Begin(context.Context) (Snapshot, error) { return Snapshot{}, nil }
func (f *fakeAPI) GetEdge(context.Context, Snapshot, VertexRef, string) (*Edge, error) {
	return nil, nil
}
func (f *fakeAPI) Commit(context.Context, []txn.Read, []txn.Op) (*CommitResult, error) {
	return nil, nil
}
func (f *fakeAPI) Run(context.Context, string, json.RawMessage, *Snapshot) (json.RawMessage, error) {
	return nil, nil
}
func (f *fakeAPI) Programs() []ProgramInfo                 { return nil }
func (f *fakeAPI) Status(context.Context) (*Status, error) { return nil, nil }

// batchingAPI is a fakeAPI with a batched read that answers in one request.
type batchingAPI struct {
	fakeAPI
	batches int
}

func (b *batchingAPI) GetVertices(ctx context.Context, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	b.batches++
	out := make([]*Vertex, len(refs))
	for i, r := range refs {
		out[i] = &Vertex{Handle: r.Name, Exists: r.Name != "missing"}
	}
	return out, 1, nil
}

func refsOf(names ...string) []VertexRef {
	out := make([]VertexRef, len(names))
	for i, n := range names {
		out[i] = VertexRef{Name: n}
	}
	return out
}

func handles(vs []*Vertex) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Handle)
	}
	return out
}

// TestGetVertices: an API with a batched read is read in one batch; one
// without is read vertex by vertex, in ref order; GetVerticesEach reads
// vertex by vertex even when the API batches; an error of any read fails
// the whole read.
func TestGetVertices(t *testing.T) {
	ctx := context.Background()
	names := []string{"c", "missing", "a", "b"}
	for i := range 40 { // more than fallbackParallelMax at a time
		names = append(names, string(rune('d'+i)))
	}
	refs := refsOf(names...)

	b := &batchingAPI{}
	vs, requests, err := GetVertices(ctx, b, Snapshot{}, refs, ReadOptions{})
	if err != nil || requests != 1 || b.batches != 1 || b.calls != 0 || !slices.Equal(handles(vs), names) {
		t.Errorf("batching API: %v requests %d batches %d calls %d, %v", handles(vs), requests, b.batches, b.calls, err)
	}
	vs, requests, err = GetVerticesEach(ctx, b, Snapshot{}, refs, ReadOptions{})
	if err != nil || requests != len(refs) || b.batches != 1 || b.calls != len(refs) || !slices.Equal(handles(vs), names) {
		t.Errorf("each on a batching API: %v requests %d batches %d calls %d, %v", handles(vs), requests, b.batches, b.calls, err)
	}
	if vs[1].Exists || !vs[0].Exists {
		t.Errorf("exists: %+v %+v", vs[0], vs[1])
	}

	f := &fakeAPI{}
	vs, requests, err = GetVertices(ctx, f, Snapshot{}, refs, ReadOptions{})
	if err != nil || requests != len(refs) || f.calls != len(refs) || !slices.Equal(handles(vs), names) {
		t.Errorf("plain API: %v requests %d calls %d, %v", handles(vs), requests, f.calls, err)
	}

	f = &fakeAPI{fail: "a"}
	if vs, _, err := GetVertices(ctx, f, Snapshot{}, refs, ReadOptions{}); !errors.Is(err, errFake) || vs != nil {
		t.Errorf("failing read: %v %v", vs, err)
	}
}
