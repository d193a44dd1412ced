package nodeprog

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Registry maps names to node programs and whole-snapshot analyses. Names
// are unique across both. A Registry is filled at start-up and read-only
// afterwards; reads are then safe for concurrent use.
type Registry struct {
	progs    map[string]Program
	analyses map[string]Analysis
	docs     map[string]ProgramDoc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{progs: map[string]Program{}, analyses: map[string]Analysis{}, docs: map[string]ProgramDoc{}}
}

// Builtins returns a new registry holding every built-in program and
// analysis (see the package documentation for the table).
func Builtins() *Registry {
	r := NewRegistry()
	for _, p := range builtinPrograms() {
		if err := r.Register(p); err != nil {
			panic(err)
		}
	}
	for _, a := range builtinAnalyses() {
		if err := r.RegisterAnalysis(a); err != nil {
			panic(err)
		}
	}
	for n, d := range builtinDocs {
		r.docs[n] = d
	}
	return r
}

// Register adds a program; a taken name is an error.
func (r *Registry) Register(p Program) error {
	if err := r.free(p.Name()); err != nil {
		return err
	}
	r.progs[p.Name()] = p
	return nil
}

// RegisterAnalysis adds an analysis; a taken name is an error.
func (r *Registry) RegisterAnalysis(a Analysis) error {
	if err := r.free(a.Name()); err != nil {
		return err
	}
	r.analyses[a.Name()] = a
	return nil
}

func (r *Registry) free(name string) error {
	if name == "" {
		return fmt.Errorf("nodeprog: register: empty name")
	}
	if _, ok := r.progs[name]; ok {
		return fmt.Errorf("nodeprog: register: %q is already a program", name)
	}
	if _, ok := r.analyses[name]; ok {
		return fmt.Errorf("nodeprog: register: %q is already an analysis", name)
	}
	return nil
}

// Program returns the program registered under name.
func (r *Registry) Program(name string) (Program, bool) {
	p, ok := r.progs[name]
	return p, ok
}

// Analysis returns the analysis registered under name.
func (r *Registry) Analysis(name string) (Analysis, bool) {
	a, ok := r.analyses[name]
	return a, ok
}

// Programs and Analyses list the registered names, sorted.
func (r *Registry) Programs() []string { return sortedKeys(r.progs) }
func (r *Registry) Analyses() []string { return sortedKeys(r.analyses) }

// Compile looks a program up and validates its params: ErrUnknownProgram or
// a ParamError (ErrBadParams) when the request is wrong.
func (r *Registry) Compile(name string, params json.RawMessage) (Compiled, error) {
	p, ok := r.progs[name]
	if !ok {
		if _, isAnalysis := r.analyses[name]; isAnalysis {
			return nil, fmt.Errorf("%w: %q is a whole-snapshot analysis, not a node program", ErrUnknownProgram, name)
		}
		return nil, fmt.Errorf("%w: %q", ErrUnknownProgram, name)
	}
	return p.Compile(params)
}

// CompileAnalysis looks an analysis up and validates its params.
func (r *Registry) CompileAnalysis(name string, params json.RawMessage) (Job, error) {
	a, ok := r.analyses[name]
	if !ok {
		if _, isProg := r.progs[name]; isProg {
			return nil, fmt.Errorf("%w: %q is a node program, not an analysis", ErrUnknownProgram, name)
		}
		return nil, fmt.Errorf("%w: analysis %q", ErrUnknownProgram, name)
	}
	return a.Compile(params)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
