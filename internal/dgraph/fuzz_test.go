package dgraph

import (
	"testing"

	"github.com/weft-db/weft/internal/rdf"
)

// FuzzParseJSON: any input is rejected or gives quads that render to N-Quads
// the RDF parser reads back to the same quads.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"uid": "_:a", "name": "A", "age": 3, "friend": [{"name": "B", "friend|w": 1.5}]}`,
		`[{"uid": "0x1", "name": null}, {"uid": "0x2"}]`,
		`{"loc": {"type": "Point", "coordinates": [1, 2]}, "name@en": "x", "name@en|f": "2006-01-02"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, del bool) {
		qs, err := ParseJSON(data, del)
		if err != nil {
			return
		}
		for _, q := range qs {
			back, err := rdf.Parse(q.String())
			if err != nil {
				continue // a name the N-Quads syntax cannot spell (checkQuad rejects most)
			}
			if len(back) != 1 || !back[0].Equal(q) {
				t.Fatalf("%s reads back as %v", q, back)
			}
		}
	})
}
