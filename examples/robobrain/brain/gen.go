// Package brain is a RoboBrain-style knowledge graph on Weft (Weaver
// dissertation §4.8): concepts are vertices, typed relations with a
// confidence are edges, and concepts are merged and split as knowledge
// arrives, each restructuring one transaction, while readers check at their
// snapshots that the graph is never seen half restructured.
//
// A relation src -kind-> dst is stored twice in the same transaction: as the
// out-edge "out:kind:dst" of src and as the mirror "in:kind:src" of dst, so
// that a concept's read shows all its relations, both ways. Every concept is
// the target of an edge of the registry vertex, its names are its aliases
// (prefix/name/NAME), and a stats vertex holds the number of concepts and of
// relations; merges and splits keep all of these in step.
package brain

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Relation kinds.
const (
	IsA           = "is_a"
	PartOf        = "part_of"
	HasAffordance = "has_affordance"
	LocatedIn     = "located_in"
)

// Concept is a generated concept.
type Concept struct{ Name, Kind string }

// Relation is a generated relation between concepts (indices).
type Relation struct {
	Src, Dst   int
	Kind       string
	Confidence float64
}

// Knowledge is the generated graph, with the restructurings planned on it.
type Knowledge struct {
	Concepts  []Concept
	Relations []Relation
	Merges    [][2]string // names of duplicate concepts that should merge
	Splits    []string    // names of ambiguous concepts that should split
}

var (
	categories  = []string{"container", "furniture", "appliance", "tool", "utensil", "device", "food", "animal", "vehicle", "clothing", "toy", "plant", "fixture", "electronics", "tableware", "cookware", "textile", "instrument", "stationery", "decoration"}
	places      = []string{"kitchen", "living_room", "bedroom", "bathroom", "garage", "office", "garden", "hallway", "dining_room", "basement", "attic", "laundry_room", "workshop", "pantry", "porch"}
	affordances = []string{"drink_from", "sit_on", "grasp", "pour", "open", "close", "cut", "push", "pull", "lift", "wash", "store_in", "heat", "cool", "watch", "call", "ride", "throw", "fold", "write_with", "click", "hit_with"}
	dupPairs    = [][2]string{{"cup", "mug"}, {"sofa", "couch"}, {"fridge", "refrigerator"}, {"tv", "television"}, {"bike", "bicycle"}, {"phone", "telephone"}, {"pan", "skillet"}, {"trash_can", "garbage_bin"}, {"pillow", "cushion"}, {"faucet", "tap"}}
	ambiguous   = []string{"mouse", "bat", "glass", "remote", "file", "pitcher"}
	objects     = []string{"bottle", "plate", "bowl", "spoon", "fork", "knife", "table", "chair", "bed", "lamp", "door", "window", "drawer", "shelf", "oven", "microwave", "toaster", "kettle", "sink", "towel", "shirt", "shoe", "ball", "book", "pen", "pencil", "laptop", "keyboard", "monitor", "hammer", "screwdriver", "wrench", "broom", "bucket", "basket", "box", "jar", "lid", "handle", "knob", "button", "cable", "plug", "switch", "mirror", "clock", "vase", "rug", "curtain", "blanket"}
)

// Generate makes seeded knowledge: the fixed categories, places and
// affordances, the named objects, duplicate pairs (sharing some relations,
// at different confidences) and ambiguous concepts, then generated objects
// up to objectsN, among them dups more duplicate pairs (thing_NN and
// thing_NN_syn) and ambig more ambiguous concepts (term_NN), and about
// perObject relations per object.
func Generate(seed uint64, objectsN, perObject, dups, ambig int) *Knowledge {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	k := &Knowledge{}
	idx := map[string]int{}
	add := func(name, kind string) int {
		idx[name] = len(k.Concepts)
		k.Concepts = append(k.Concepts, Concept{name, kind})
		return idx[name]
	}
	for _, n := range categories {
		add(n, "category")
	}
	for _, n := range places {
		add(n, "place")
	}
	for _, n := range affordances {
		add(n, "affordance")
	}
	pairs := append([][2]string(nil), dupPairs...)
	for i := range dups {
		pairs = append(pairs, [2]string{fmt.Sprintf("thing_%02d", i), fmt.Sprintf("thing_%02d_syn", i)})
	}
	amb := append([]string(nil), ambiguous...)
	for i := range ambig {
		amb = append(amb, fmt.Sprintf("term_%02d", i))
	}
	var objs []int
	for _, p := range pairs {
		objs = append(objs, add(p[0], "object"), add(p[1], "object"))
		k.Merges = append(k.Merges, p)
	}
	for _, n := range amb {
		objs = append(objs, add(n, "object"))
		k.Splits = append(k.Splits, n)
	}
	for _, n := range objects {
		objs = append(objs, add(n, "object"))
	}
	for i := len(objs); i < objectsN; i++ {
		objs = append(objs, add(fmt.Sprintf("item_%03d", i), "object"))
	}
	seen := map[[3]any]bool{}
	rel := func(src, dst int, kind string) bool {
		key := [3]any{src, dst, kind}
		if src == dst || seen[key] {
			return false
		}
		seen[key] = true
		k.Relations = append(k.Relations, Relation{src, dst, kind, 0.5 + float64(r.IntN(50))/100})
		return true
	}
	pick := func(names []string) int { return idx[names[r.IntN(len(names))]] }
	for _, o := range objs {
		for range perObject {
			switch r.IntN(4) {
			case 0:
				rel(o, pick(categories), IsA)
			case 1:
				rel(o, objs[r.IntN(len(objs))], PartOf)
			case 2:
				rel(o, pick(affordances), HasAffordance)
			default:
				rel(o, pick(places), LocatedIn)
			}
		}
	}
	// Duplicates share some of what is known of them, with other
	// confidences: merging them deduplicates those relations.
	for _, p := range pairs {
		a, b := idx[p[0]], idx[p[1]]
		for _, x := range append([]Relation(nil), k.Relations...) {
			if x.Src == a && r.IntN(2) == 0 {
				rel(b, x.Dst, x.Kind)
			}
		}
	}
	sort.SliceStable(k.Relations, func(i, j int) bool { return k.Relations[i].Src < k.Relations[j].Src })
	return k
}

// Index returns the concept index of each name.
func (k *Knowledge) Index() map[string]int {
	m := make(map[string]int, len(k.Concepts))
	for i, c := range k.Concepts {
		m[c.Name] = i
	}
	return m
}

// SplitsUse reports whether a relation kind goes to the "use" half of a
// split concept (affordances and locations); the rest (is_a, part_of) go
// to the "kind" half, which keeps the old name.
func SplitsUse(kind string) bool { return kind == HasAffordance || kind == LocatedIn }
