package nodeprog

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestReferenceMatchesPrograms checks the parameter metadata against the
// programs it documents, so docs/programs-reference.md cannot drift from
// what the programs decode.
func TestReferenceMatchesPrograms(t *testing.T) {
	r := Builtins()
	names := append(r.Programs(), r.Analyses()...)
	var documented []string
	for _, d := range BuiltinDocs() {
		documented = append(documented, d.Name)
	}
	if a, b := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(documented)); !slices.Equal(a, b) {
		t.Fatalf("built-ins %v, documented %v", a, b)
	}
	for _, d := range BuiltinDocs() {
		if d.Summary == "" || d.Result == "" || d.Example == "" {
			t.Errorf("%s: summary, result or example missing", d.Name)
		}
		var params []string
		for _, p := range d.Params {
			if p.Type == "" || p.Doc == "" || (p.Required && p.Default != "") {
				t.Errorf("%s.%s: type or doc missing, or a default on a required param", d.Name, p.Name)
			}
			params = append(params, p.Name)
		}
		slices.Sort(params)
		var fields []string
		for _, p := range r.Params(d.Name) {
			fields = append(fields, p.Name)
		}
		if slices.Sort(fields); !slices.Equal(fields, params) {
			t.Errorf("%s decodes %v, documented %v", d.Name, fields, params)
		}
		if _, ok := r.Program(d.Name); ok {
			if d.Analysis {
				t.Errorf("%s is a node program, documented as an analysis", d.Name)
			}
			for _, ex := range append([]string{d.Example}, d.More...) {
				if _, err := r.Compile(d.Name, json.RawMessage(ex)); err != nil {
					t.Errorf("%s: example %s: %v", d.Name, ex, err)
				}
			}
			continue
		}
		if !d.Analysis {
			t.Errorf("%s is an analysis, documented as a node program", d.Name)
		}
		if _, err := r.CompileAnalysis(d.Name, json.RawMessage(d.Example)); err != nil {
			t.Errorf("%s: example: %v", d.Name, err)
		}
	}
}
