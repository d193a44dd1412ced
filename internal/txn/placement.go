package txn

import "strings"

// Placement groups: co-location of vertices chosen by their names.
//
// A handle (or alias) of the form "_pl|<group>|<rest>" — GroupPrefix, a
// non-empty group name without '|', a '|', then anything — belongs to
// placement group <group>: ShardOf places it by the FNV-1a hash of
// "_pl|<group>" instead of its whole name, so every member of a group lives
// on one shard, whatever the shard count. Every component that places a
// vertex (the in-process engine, gatekeepers, shard recovery, the cluster
// and the simulator) calls ShardOf, so they all agree. Nothing else about
// a grouped vertex is special: transactions and programs may span groups
// and ungrouped vertices freely. A name that starts with GroupPrefix but
// has no second '|' (or an empty group) is an ordinary name.
//
// The Dgraph face uses groups for predicate placement (a predicate's data
// on one shard); any front end may use them to co-locate what it reads
// together.

// GroupPrefix starts the name of a vertex that belongs to a placement group.
const GroupPrefix = "_pl|"

// GroupOf returns the placement key of name ("_pl|<group>", which ShardOf
// hashes) and true when name belongs to a placement group.
func GroupOf(name string) (string, bool) {
	if !strings.HasPrefix(name, GroupPrefix) {
		return "", false
	}
	i := strings.IndexByte(name[len(GroupPrefix):], '|')
	if i <= 0 {
		return "", false
	}
	return name[:len(GroupPrefix)+i], true
}

// GroupName is the name of member rest of placement group group. group must
// be non-empty and free of '|' (a programmer error otherwise).
func GroupName(group, rest string) string {
	if group == "" || strings.IndexByte(group, '|') >= 0 {
		panic("txn: placement group " + group + " is empty or contains '|'")
	}
	return GroupPrefix + group + "|" + rest
}
