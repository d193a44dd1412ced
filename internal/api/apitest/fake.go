package apitest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Program is a fake node program: params in, JSON result out.
type Program func(f *Fake, params json.RawMessage) (json.RawMessage, error)

// Fake is an in-memory engine.API.
type Fake struct {
	mu       sync.Mutex
	g        graph
	clock    uint64 // stamp of the last commit
	closed   bool
	fail     map[string][]error
	programs map[string]Program
	commits  uint64
	aborts   uint64
	runs     uint64
	// Calls counts calls per method (under mu; read with CallCount).
	calls map[string]int
}

type graph struct {
	vertices map[string]*vertex
	aliases  map[string]*alias
	gen      int
}

type vertex struct {
	exists    bool
	lastWrite uint64
	props     map[string]value.Value
	edges     map[string]*edge
	aliases   map[string]bool
}

type edge struct {
	dst   string
	props map[string]value.Value
}

type alias struct {
	handle    string // "" when unbound
	lastWrite uint64
}

var _ engine.API = (*Fake)(nil)

// New returns an empty Fake with the programs "echo" (returns its params) and
// "count" ({"vertices": n, "edges": m}).
func New() *Fake {
	f := &Fake{
		g:     graph{vertices: map[string]*vertex{}, aliases: map[string]*alias{}},
		fail:  map[string][]error{},
		calls: map[string]int{},
		programs: map[string]Program{
			"echo": func(_ *Fake, p json.RawMessage) (json.RawMessage, error) { return p, nil },
			"count": func(f *Fake, _ json.RawMessage) (json.RawMessage, error) {
				f.mu.Lock()
				v, e := f.g.sizes()
				f.mu.Unlock()
				return json.Marshal(map[string]int64{"vertices": v, "edges": e})
			},
		},
	}
	return f
}

// AddProgram registers a program. Programs run with the Fake unlocked.
func (f *Fake) AddProgram(name string, p Program) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.programs[name] = p
}

// Inject makes the next calls of method ("Begin", "GetVertex", "GetEdge",
// "Commit", "Run", "Status") fail with errs, one per call, in order.
func (f *Fake) Inject(method string, errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] = append(f.fail[method], errs...)
}

// CallCount reports how many times method was called.
func (f *Fake) CallCount(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Close makes every later call fail with engine.ErrClosed.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// enter locks f and returns the error the call must fail with, if any. The
// caller unlocks.
func (f *Fake) enter(ctx context.Context, method string) error {
	f.mu.Lock()
	f.calls[method]++
	if q := f.fail[method]; len(q) > 0 {
		f.fail[method] = q[1:]
		return q[0]
	}
	if f.closed {
		return engine.ErrClosed
	}
	return ctx.Err()
}

func (f *Fake) token() engine.Snapshot {
	return engine.Snapshot{Token: "s" + strconv.FormatUint(f.clock, 10)}
}

func checkToken(s engine.Snapshot) error {
	if n, ok := strings.CutPrefix(s.Token, "s"); ok {
		if _, err := strconv.ParseUint(n, 10, 64); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: bad snapshot token %q", engine.ErrBadRequest, s.Token)
}

func version(stamp uint64) []byte {
	if stamp == 0 {
		return nil
	}
	return binary.BigEndian.AppendUint64(nil, stamp)
}

// Begin implements engine.API.
func (f *Fake) Begin(ctx context.Context) (engine.Snapshot, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "Begin"); err != nil {
		return engine.Snapshot{}, err
	}
	return f.token(), nil
}

// resolve names a vertex's handle and the reads that cover it, as the engine
// does: the vertex's (zero when an unbound alias names none) and, for an
// alias, the alias's.
func (g *graph) resolve(ref engine.VertexRef) (string, txn.Read, *txn.Read) {
	h := ref.Name
	var aliasRead *txn.Read
	if ref.Alias {
		a := g.aliases[ref.Name]
		var stamp uint64
		h = ""
		if a != nil {
			stamp, h = a.lastWrite, a.handle
		}
		aliasRead = &txn.Read{Vertex: ref.Name, Alias: true, Version: version(stamp)}
		if h == "" {
			return "", txn.Read{}, aliasRead
		}
	}
	var stamp uint64
	if v := g.vertices[h]; v != nil {
		stamp = v.lastWrite
	}
	return h, txn.Read{Vertex: h, Version: version(stamp)}, aliasRead
}

// GetVertex implements engine.API.
func (f *Fake) GetVertex(ctx context.Context, snap engine.Snapshot, ref engine.VertexRef, opts engine.ReadOptions) (*engine.Vertex, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "GetVertex"); err != nil {
		return nil, err
	}
	if err := checkToken(snap); err != nil {
		return nil, err
	}
	h, rd, ard := f.g.resolve(ref)
	out := &engine.Vertex{Handle: h, Read: rd, AliasRead: ard}
	v := f.g.vertices[h]
	if v == nil || !v.exists {
		return out, nil
	}
	out.Exists = true
	if opts.Props {
		out.Props = maps.Clone(v.props)
	}
	if opts.Aliases {
		out.Aliases = slices.Sorted(maps.Keys(v.aliases))
	}
	if opts.Edges {
		max := opts.EdgesMax
		if max == 0 {
			max = engine.EdgesMaxDefault
		}
		for _, eh := range slices.Sorted(maps.Keys(v.edges)) {
			if len(out.Edges) == max {
				out.EdgesTruncated = true
				break
			}
			e := v.edges[eh]
			out.Edges = append(out.Edges, engine.Edge{Handle: eh, Src: h, Dst: e.dst, Exists: true, Props: maps.Clone(e.props), Read: rd})
		}
	}
	return out, nil
}

// GetEdge implements engine.API.
func (f *Fake) GetEdge(ctx context.Context, snap engine.Snapshot, src engine.VertexRef, handle string) (*engine.Edge, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "GetEdge"); err != nil {
		return nil, err
	}
	if err := checkToken(snap); err != nil {
		return nil, err
	}
	h, rd, ard := f.g.resolve(src)
	out := &engine.Edge{Handle: handle, Src: h, Read: rd, AliasRead: ard}
	if v := f.g.vertices[h]; v != nil && v.exists {
		if e := v.edges[handle]; e != nil {
			out.Dst, out.Exists, out.Props = e.dst, true, maps.Clone(e.props)
		}
	}
	return out, nil
}

// Commit implements engine.API: reads are validated against the latest
// state, then ops run on a copy that replaces the state only if all succeed.
func (f *Fake) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*engine.CommitResult, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "Commit"); err != nil {
		return nil, err
	}
	for _, rd := range reads {
		var stamp uint64
		if rd.Alias {
			if a := f.g.aliases[rd.Vertex]; a != nil {
				stamp = a.lastWrite
			}
		} else if v := f.g.vertices[rd.Vertex]; v != nil {
			stamp = v.lastWrite
		}
		if string(version(stamp)) != string(rd.Version) {
			f.aborts++
			return nil, fmt.Errorf("%w: %q changed since it was read", engine.ErrAborted, rd.Vertex)
		}
	}
	g := f.g.clone()
	ts := f.clock + 1
	var handles []string
	for i := range ops {
		if err := ops[i].Validate(); err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i, ops[i].Kind, err)
		}
		h, err := g.apply(&ops[i], ts)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i, ops[i].Kind, err)
		}
		if h != "" {
			handles = append(handles, h)
		}
	}
	f.g, f.clock = g, ts
	f.commits++
	return &engine.CommitResult{Handles: handles, Snapshot: f.token()}, nil
}

// Run implements engine.API. The program runs without the Fake locked, so a
// slow one does not block other calls.
func (f *Fake) Run(ctx context.Context, program string, params json.RawMessage, at *engine.Snapshot) (json.RawMessage, error) {
	p, err := f.program(ctx, program, at)
	if err != nil {
		return nil, err
	}
	return p(f, params)
}

func (f *Fake) program(ctx context.Context, program string, at *engine.Snapshot) (Program, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "Run"); err != nil {
		return nil, err
	}
	if at != nil {
		if err := checkToken(*at); err != nil {
			return nil, err
		}
	}
	p, ok := f.programs[program]
	if !ok {
		return nil, fmt.Errorf("%w: %q", engine.ErrUnknownProgram, program)
	}
	f.runs++
	return p, nil
}

// Programs implements engine.API.
func (f *Fake) Programs() []engine.ProgramInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []engine.ProgramInfo
	for _, name := range slices.Sorted(maps.Keys(f.programs)) {
		out = append(out, engine.ProgramInfo{Name: name, Description: "fake program " + name, Kind: "program", Params: []engine.ProgramParam{}})
	}
	return out
}

// Status implements engine.API.
func (f *Fake) Status(ctx context.Context) (*engine.Status, error) {
	defer f.mu.Unlock()
	if err := f.enter(ctx, "Status"); err != nil {
		return nil, err
	}
	v, e := f.g.sizes()
	return &engine.Status{Gatekeepers: 1, Shards: 1, Vertices: v, Edges: e, Commits: f.commits,
		Aborts: f.aborts, Programs: f.runs}, nil
}

func (g *graph) sizes() (vertices, edges int64) {
	for _, v := range g.vertices {
		if v.exists {
			vertices++
			edges += int64(len(v.edges))
		}
	}
	return vertices, edges
}

func (g *graph) clone() graph {
	out := graph{vertices: make(map[string]*vertex, len(g.vertices)), aliases: make(map[string]*alias, len(g.aliases)), gen: g.gen}
	for h, v := range g.vertices {
		c := &vertex{exists: v.exists, lastWrite: v.lastWrite, props: maps.Clone(v.props),
			edges: make(map[string]*edge, len(v.edges)), aliases: maps.Clone(v.aliases)}
		for eh, e := range v.edges {
			c.edges[eh] = &edge{dst: e.dst, props: maps.Clone(e.props)}
		}
		out.vertices[h] = c
	}
	for n, a := range g.aliases {
		out.aliases[n] = &alias{handle: a.handle, lastWrite: a.lastWrite}
	}
	return out
}

// live resolves a name to a live vertex.
func (g *graph) live(name string, isAlias bool, ts uint64) (string, *vertex, error) {
	h, _, _ := g.resolve(engine.VertexRef{Name: name, Alias: isAlias})
	v := g.vertices[h]
	if v == nil || !v.exists {
		return "", nil, fmt.Errorf("%w: vertex %q", txn.ErrNotFound, name)
	}
	v.lastWrite = ts
	return h, v, nil
}

// apply runs one op at stamp ts; it returns the handle of a created element.
func (g *graph) apply(o *txn.Op, ts uint64) (string, error) {
	if o.Kind == txn.CreateVertex {
		h := o.Vertex
		if h == "" {
			g.gen++
			h = "_v" + strconv.Itoa(g.gen)
		}
		if v := g.vertices[h]; v != nil && v.exists {
			return "", fmt.Errorf("%w: vertex %q", txn.ErrExists, h)
		}
		g.vertices[h] = &vertex{exists: true, lastWrite: ts, props: map[string]value.Value{},
			edges: map[string]*edge{}, aliases: map[string]bool{}}
		return h, nil
	}
	h, v, err := g.live(o.Vertex, o.VertexAlias, ts)
	if err != nil {
		return "", err
	}
	switch o.Kind {
	case txn.DeleteVertex:
		g.deleteVertex(h, v, ts)
	case txn.CreateEdge:
		dst, _, err := g.live(o.Dst, o.DstAlias, ts)
		if err != nil {
			return "", err
		}
		eh := o.Edge
		if eh == "" {
			g.gen++
			eh = "_e" + strconv.Itoa(g.gen)
		}
		if v.edges[eh] != nil {
			return "", fmt.Errorf("%w: edge %q of vertex %q", txn.ErrExists, eh, h)
		}
		v.edges[eh] = &edge{dst: dst, props: map[string]value.Value{}}
		return eh, nil
	case txn.DeleteEdge, txn.SetEdgeProp, txn.DeleteEdgeProp:
		e := v.edges[o.Edge]
		if e == nil {
			return "", fmt.Errorf("%w: edge %q of vertex %q", txn.ErrNotFound, o.Edge, h)
		}
		switch o.Kind {
		case txn.DeleteEdge:
			delete(v.edges, o.Edge)
		case txn.SetEdgeProp:
			e.props[o.Key] = o.Value
		default:
			delete(e.props, o.Key)
		}
	case txn.SetVertexProp:
		v.props[o.Key] = o.Value
	case txn.DeleteVertexProp:
		delete(v.props, o.Key)
	case txn.AddAlias:
		a := g.aliases[o.Alias]
		if a != nil && a.handle != "" {
			return "", fmt.Errorf("%w: alias %q", txn.ErrExists, o.Alias)
		}
		g.aliases[o.Alias] = &alias{handle: h, lastWrite: ts}
		v.aliases[o.Alias] = true
	case txn.RemoveAlias:
		a := g.aliases[o.Alias]
		if a == nil || a.handle != h {
			return "", fmt.Errorf("%w: alias %q of vertex %q", txn.ErrNotFound, o.Alias, h)
		}
		a.handle, a.lastWrite = "", ts
		delete(v.aliases, o.Alias)
	}
	return "", nil
}

func (g *graph) deleteVertex(h string, v *vertex, ts uint64) {
	for _, u := range g.vertices {
		for eh, e := range u.edges {
			if e.dst == h {
				delete(u.edges, eh)
				u.lastWrite = ts
			}
		}
	}
	for a := range v.aliases {
		g.aliases[a] = &alias{lastWrite: ts}
	}
	*v = vertex{lastWrite: ts, props: map[string]value.Value{}, edges: map[string]*edge{}, aliases: map[string]bool{}}
}
