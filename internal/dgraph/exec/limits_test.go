package exec

import (
	"context"
	"errors"
	"testing"
)

// TestLimits checks that the Config bounds fail queries cleanly, and that a
// cancelled context stops one.
func TestLimits(t *testing.T) {
	f := newFixture(t, peopleSchema, peopleData)
	q := `{ q(func: uid(0x1)) { name friend { name friend { name } } } }`
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"nodes", func(c *Config) { c.NodesMax = 2 }},
		{"edges", func(c *Config) { c.EdgesMax = 1 }},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		e, err := NewWithConfig(f.g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Query(context.Background(), f.reader(t, false), q, nil); !errors.Is(err, ErrLimit) {
			t.Errorf("%s: error %v, want ErrLimit", c.name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.RecurseDepthMax = 0
	if _, err := NewWithConfig(f.g, cfg); err == nil {
		t.Error("a zero RecurseDepthMax was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := f.reader(t, false)
	cancel()
	if _, err := f.e.Query(ctx, r, q, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled query: %v", err)
	}
}
