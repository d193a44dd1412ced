package txn

import (
	"fmt"
	"hash/fnv"
	"testing"
)

func fnvShard(s string, n uint32) uint32 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return uint32(h.Sum64() % uint64(n))
}

func TestGroupOf(t *testing.T) {
	for _, tc := range []struct {
		name, group string
		ok          bool
	}{
		{"_pl|name|0x1f", "_pl|name", true},
		{"_pl|name|", "_pl|name", true},
		{"_pl|a|b|c", "_pl|a", true},
		{"_pl|name", "", false}, // no second '|'
		{"_pl||x", "", false},   // empty group
		{"_pl|", "", false},
		{"0x1f", "", false},
		{"_dg|h|name|1", "", false},
		{"x_pl|a|b", "", false},
	} {
		g, ok := GroupOf(tc.name)
		if g != tc.group || ok != tc.ok {
			t.Errorf("GroupOf(%q) = %q, %v; want %q, %v", tc.name, g, ok, tc.group, tc.ok)
		}
	}
}

// TestShardOfGroups: every member of a group is on the shard its group key
// hashes to, for every shard count; other names keep their own hash.
func TestShardOfGroups(t *testing.T) {
	for _, shards := range []uint32{1, 2, 3, 7, 16} {
		for _, group := range []string{"name", "starring", "film.performance.actor", "日本"} {
			want := fnvShard(GroupPrefix+group, shards)
			for i := range 50 {
				h := GroupName(group, fmt.Sprintf("0x%x", i+1))
				if got := ShardOf(h, shards); got != want {
					t.Fatalf("ShardOf(%q, %d) = %d, want the group's shard %d", h, shards, got, want)
				}
			}
		}
		for _, h := range []string{"0x1f", "_pl|x", "_pl||y", "_dg|schema"} {
			if got, want := ShardOf(h, shards), fnvShard(h, shards); got != want {
				t.Errorf("ShardOf(%q, %d) = %d, want its own hash %d", h, shards, got, want)
			}
		}
	}
}

// TestShardOfGroupsSpread: distinct groups do not all land on one shard.
func TestShardOfGroupsSpread(t *testing.T) {
	seen := map[uint32]bool{}
	for i := range 64 {
		seen[ShardOf(GroupName(fmt.Sprintf("p%d", i), "0x1"), 8)] = true
	}
	if len(seen) < 4 {
		t.Fatalf("64 groups used only %d of 8 shards", len(seen))
	}
}

func TestGroupNamePanicsOnBadGroup(t *testing.T) {
	for _, g := range []string{"", "a|b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("GroupName(%q, ...) did not panic", g)
				}
			}()
			GroupName(g, "x")
		}()
	}
}
