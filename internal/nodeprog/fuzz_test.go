package nodeprog_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// FuzzCompile: any params for any program or analysis either compile or
// fail with ErrBadParams; nothing panics. What compiles runs on a small
// graph without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`{"node":"jupiter"}`, `{"src":"hercules","dest":"tartarus","path_len":3}`,
		`{"src":"a","weight":"w","edge_props":[{"key":"w","rel":"LESS","value":{"$datetime":"2024-01-01T00:00:00Z"}}]}`,
		`{"src":"hercules","node_props":[{},{"type":"god"}],"edge_props":[{"label":"father"}]}`,
		`{"nodes":["jupiter"]}`, `{"node":"hercules","prop_key":"type","prop_value":[1,2]}`,
		`{"top":3,"damping":0.5}`, `{"mode":"undirected"}`, `null`, `[]`, `{"edge_props":{"a":[[[[[[[[[1]]]]]]]]]}}`,
	} {
		for i := range len(reg.Programs()) + len(reg.Analyses()) {
			f.Add(uint8(i), []byte(s))
		}
	}
	g := godsGraph()
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		names := append(reg.Programs(), reg.Analyses()...)
		name := names[int(which)%len(names)]
		if _, ok := reg.Analysis(name); ok {
			_, err := reg.Analyze(g, name, params, nodeprog.SnapshotLimits{})
			if err != nil && !errors.Is(err, nodeprog.ErrBadParams) && !errors.Is(err, nodeprog.ErrTooLarge) {
				t.Fatalf("%s %s: %v", name, params, err)
			}
			return
		}
		if _, err := reg.Compile(name, params); err != nil {
			if !errors.Is(err, nodeprog.ErrBadParams) {
				t.Fatalf("%s %s: %v", name, params, err)
			}
			return
		}
		c := progtest.NewCluster(g, reg, progtest.Options{Shards: 2, Wire: true, Runner: nodeprog.Config{HopsMax: 5000}})
		if _, _, err := c.Run(name, json.RawMessage(params)); err != nil &&
			!errors.Is(err, nodeprog.ErrTooLarge) && !errors.Is(err, nodeprog.ErrFailed) {
			t.Fatalf("%s %s: %v", name, params, err)
		}
	})
}

// FuzzDecodeBatch: a runner decodes any bytes into a batch or an error;
// a decoded batch runs or fails cleanly.
func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`{"id":{"shard":-1,"seq":1},"prog":1,"name":"bfs","params":{"src":"v0"},"shard":0,"hops":[{"to":"v0","arg":{"depth":0}}]}`))
	f.Add([]byte(`{"id":{"shard":2,"seq":9},"prog":1,"name":"reachability","params":{"src":"v0","dest":"v3"},"shard":0,"hops":[{"to":"v1","arg":{"path":["v0"]}}]}`))
	f.Add([]byte(`{"prog":1,"name":"shortest_path","params":{"src":"v0","weight":"w"},"hops":[{"to":"v2","arg":{"cost":-1e308,"wide":true}}]}`))
	f.Add([]byte(`{"prog":1,"name":"traverse_props","params":{"src":"v0","node_props":[{}]},"hops":[{"to":"v2","arg":{"level":99}}]}`))
	g := lineGraph(5)
	one := func(string) int { return 0 }
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _ := nodeprog.NewRunner(reg, 0, nodeprog.Config{HopsMax: 1000})
		b, err := r.DecodeBatch(data)
		if err != nil {
			return
		}
		// a hop argument that decodes but breaks a program's assumptions
		// fails the program, never the shard
		if _, rep, err := r.Run([]nodeprog.Batch{b}, g.Lookup, one); err != nil && rep.Failed() == nil {
			t.Fatalf("batch %s: error %v not in the report", data, err)
		}
	})
}

// FuzzDecodeReport: a coordinator decodes any bytes into a report or an
// error, and steps any decoded report without panicking.
func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"prog":1,"shard":0,"consumed":[{"shard":-1,"seq":1}],"emits":[{"node":"v0","depth":0}],"steps":1}`))
	f.Add([]byte(`{"prog":1,"shard":0,"consumed":[{"shard":-1,"seq":1}],"code":"overloaded","err":"full"}`))
	f.Add([]byte(`{"prog":1,"consumed":[],"produced":[{"shard":3,"seq":4}],"emits":[{"node":"v0","depth":-5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"bfs", "discover_paths", "clustering"} {
			c, _, err := nodeprog.NewCoordinator(reg, 1, name, paramsFor(name), func(string) int { return 0 }, nodeprog.CoordinatorConfig{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := c.DecodeReport(data)
			if err != nil {
				continue
			}
			_ = c.Step(rep)
			if c.Done() {
				_, _ = c.Result()
			}
		}
	})
}

func paramsFor(name string) json.RawMessage {
	switch name {
	case "bfs":
		return json.RawMessage(`{"src":"v0"}`)
	case "discover_paths":
		return json.RawMessage(`{"src":"v0","dest":"v1"}`)
	}
	return json.RawMessage(`{"node":"v0"}`)
}
