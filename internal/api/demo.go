package api

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// The demo graph of `weft serve --demo`: a small social and knowledge graph of
// 50 vertices (30 people, 8 cities, 6 companies, 6 topics) and about 200
// edges, with typed properties, aliases and weighted edges, built the same way
// every time (a fixed seed). Handles are namespaced ("person/alice",
// "city/paris"); each vertex's short name is an alias ("alice", "paris"), and
// people also have their e-mail address as an alias. Every edge has a "type"
// property (knows, lives_in, works_at, likes, based_in, related_to); knows and
// likes edges carry a float "weight" in (0, 1].
//
// The whole graph is one transaction that also creates DemoMarker, after
// reading that it is absent: loading is atomic and idempotent, and two
// concurrent loaders cannot both load (one aborts, retries, and finds it).

// DemoMarker is the vertex whose existence means the demo graph is loaded.
const DemoMarker = "demo/meta"

var (
	demoPeople = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
		"mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "uma", "victor", "walter",
		"xena", "yusuf", "zoe", "amir", "bea", "chen", "dara", "emeka", "farah", "goran"}
	demoCities = []struct {
		name, country string
		population    int64
	}{{"paris", "France", 2102650}, {"lagos", "Nigeria", 15388000}, {"tokyo", "Japan", 13960000},
		{"lima", "Peru", 10004000}, {"oslo", "Norway", 709037}, {"pune", "India", 7276000},
		{"austin", "United States", 979882}, {"cairo", "Egypt", 10230000}}
	demoCompanies = []struct {
		name    string
		founded int64
		city    string
	}{{"acme", 1947, "austin"}, {"globex", 1989, "tokyo"}, {"initech", 1999, "pune"},
		{"umbrella", 1968, "paris"}, {"hooli", 2004, "lagos"}, {"stark", 1939, "oslo"}}
	demoTopics = []string{"graphs", "databases", "distributed-systems", "music", "hiking", "cooking"}
	demoRoles  = []string{"engineer", "designer", "manager", "researcher", "founder"}
)

// demoAttempts bounds LoadDemo's retries of its one transaction.
const demoAttempts = 5

// LoadDemo loads the demo graph into db unless DemoMarker exists. It reports
// whether this call loaded it.
func LoadDemo(ctx context.Context, db engine.API) (bool, error) {
	var err error
	for range demoAttempts {
		var loaded bool
		if loaded, err = loadDemoOnce(ctx, db); err == nil || !errors.Is(err, engine.ErrAborted) {
			return loaded, err
		}
	}
	return false, fmt.Errorf("api: demo graph: %w", err)
}

func loadDemoOnce(ctx context.Context, db engine.API) (bool, error) {
	snap, err := db.Begin(ctx)
	if err != nil {
		return false, err
	}
	marker, err := db.GetVertex(ctx, snap, engine.VertexRef{Name: DemoMarker}, engine.ReadOptions{})
	if err != nil {
		return false, err
	}
	if marker.Exists {
		return false, nil
	}
	if _, err := db.Commit(ctx, []txn.Read{marker.Read}, DemoOps()); err != nil {
		return false, fmt.Errorf("api: demo graph: %w", err)
	}
	return true, nil
}

// demoBuilder accumulates the demo transaction's operations.
type demoBuilder struct{ ops []txn.Op }

func (b *demoBuilder) vertex(h string, aliases []string, props ...any) {
	b.ops = append(b.ops, txn.Op{Kind: txn.CreateVertex, Vertex: h})
	for _, a := range aliases {
		b.ops = append(b.ops, txn.Op{Kind: txn.AddAlias, Vertex: h, Alias: a})
	}
	for i := 0; i < len(props); i += 2 {
		b.ops = append(b.ops, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: props[i].(string), Value: props[i+1].(value.Value)})
	}
}

func (b *demoBuilder) edge(src, handle, dst, typ string, props ...any) {
	b.ops = append(b.ops, txn.Op{Kind: txn.CreateEdge, Vertex: src, Edge: handle, Dst: dst},
		txn.Op{Kind: txn.SetEdgeProp, Vertex: src, Edge: handle, Key: "type", Value: value.Str(typ)})
	for i := 0; i < len(props); i += 2 {
		b.ops = append(b.ops, txn.Op{Kind: txn.SetEdgeProp, Vertex: src, Edge: handle, Key: props[i].(string), Value: props[i+1].(value.Value)})
	}
}

// weight is a deterministic edge weight in (0, 1] with two decimals.
func weight(r *rand.Rand) value.Value { return value.F64(float64(1+r.IntN(100)) / 100) }

// DemoOps returns the demo graph's operations (the same every call).
func DemoOps() []txn.Op {
	r := rand.New(rand.NewPCG(2024, 7))
	b := &demoBuilder{}
	b.vertex(DemoMarker, nil, "kind", value.Str("meta"), "version", value.I64(1),
		"description", value.Str("the weft serve --demo graph"))
	for _, c := range demoCities {
		b.vertex("city/"+c.name, []string{c.name}, "kind", value.Str("city"), "name", value.Str(title(c.name)),
			"country", value.Str(c.country), "population", value.I64(c.population))
	}
	for _, t := range demoTopics {
		b.vertex("topic/"+t, []string{t}, "kind", value.Str("topic"), "name", value.Str(t))
	}
	for _, c := range demoCompanies {
		b.vertex("company/"+c.name, []string{c.name}, "kind", value.Str("company"), "name", value.Str(title(c.name)),
			"founded", value.I64(c.founded))
		b.edge("company/"+c.name, "based_in", "city/"+c.city, "based_in")
	}
	for i, t := range demoTopics { // a ring of related topics
		b.edge("topic/"+t, "related_to", "topic/"+demoTopics[(i+1)%len(demoTopics)], "related_to", "weight", weight(r))
	}
	base := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range demoPeople {
		interests := r.Perm(len(demoTopics))[:1+r.IntN(2)]
		var tags []value.Value
		for _, t := range interests {
			tags = append(tags, value.Str(demoTopics[t]))
		}
		joined := base.Add(time.Duration(r.IntN(3650*24)) * time.Hour)
		b.vertex("person/"+p, []string{p, p + "@example.com"}, "kind", value.Str("person"),
			"name", value.Str(title(p)), "age", value.I64(int64(18+r.IntN(50))), "joined", value.Time(joined),
			"score", value.F64(float64(r.IntN(1000))/10), "active", value.Boolean(r.IntN(4) != 0),
			"interests", value.ListOf(tags...))
		city := demoCities[r.IntN(len(demoCities))].name
		b.edge("person/"+p, "lives_in", "city/"+city, "lives_in", "since", value.I64(int64(1990+r.IntN(35))))
		b.edge("person/"+p, "works_at", "company/"+demoCompanies[r.IntN(len(demoCompanies))].name, "works_at",
			"role", value.Str(demoRoles[r.IntN(len(demoRoles))]))
		for _, t := range interests {
			b.edge("person/"+p, "likes/"+demoTopics[t], "topic/"+demoTopics[t], "likes", "weight", weight(r))
		}
	}
	for i, p := range demoPeople { // each knows 2 to 5 others
		seen := map[int]bool{i: true}
		for range 2 + r.IntN(4) {
			j := r.IntN(len(demoPeople))
			if seen[j] {
				continue
			}
			seen[j] = true
			q := demoPeople[j]
			b.edge("person/"+p, "knows/"+q, "person/"+q, "knows", "weight", weight(r))
		}
	}
	return b.ops
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
