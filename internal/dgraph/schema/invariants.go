package schema

import (
	"fmt"
	"slices"
	"strings"
)

// check panics unless s holds the invariants Parse and Apply establish: a
// programmer error, never bad input. Run after every Parse and Apply in
// builds with -tags invariants.
func (s *Schema) check() {
	for name, p := range s.preds {
		assert(name == p.Name, "predicate keyed %q is named %q", name, p.Name)
		assert(slices.IsSortedFunc(p.Index, func(a, b Tokenizer) int { return strings.Compare(a.Name, b.Name) }),
			"%s: index not sorted", name)
		sortable := 0
		for i, t := range p.Index {
			info, ok := tokenizerInfo[t.Name]
			assert(ok && info.scalar == p.Type, "%s: tokenizer %s on %s", name, t.Name, p.Type)
			assert(i == 0 || p.Index[i-1].Name != t.Name, "%s: tokenizer %s twice", name, t.Name)
			if info.sortable {
				sortable++
			}
		}
		assert(sortable <= 1, "%s: %d sortable tokenizers", name, sortable)
		assert(!p.Reverse || p.Type == UID, "%s: @reverse on %s", name, p.Type)
		assert(!p.Lang || p.Type == String && !p.List, "%s: @lang on %s", name, p.Type)
		assert(!p.Upsert || len(p.Index) > 0, "%s: @upsert without index", name)
		assert(!p.Unique || p.Upsert, "%s: @unique without @upsert", name)
	}
	for name, t := range s.types {
		assert(name == t.Name, "type keyed %q is named %q", name, t.Name)
	}
	back, err := parse(s.String())
	assert(err == nil, "canonical text does not parse: %v\n%s", err, s)
	assert(back.Equal(s), "canonical text parses to another schema:\n%s", s)
}

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic("schema: invariant: " + fmt.Sprintf(format, args...))
	}
}
