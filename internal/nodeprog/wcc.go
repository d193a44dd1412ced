package nodeprog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// wcc: weakly connected components (edge direction ignored), by union-find.
// A component's label is the smallest handle in it, so labels do not depend
// on shard count or enumeration order.

type wccAnalysis struct{}

func (wccAnalysis) Name() string { return "wcc" }

type wccParams struct{ outputParams }

// Component is one component and its size.
type Component struct {
	Label string `json:"label"`
	Size  int    `json:"size"`
}

// Components is wcc's result. Labels maps vertices (the given nodes, or all
// when neither top nor nodes is given) to their component's label; Top
// lists the largest components (size descending, then label).
type Components struct {
	Count   int               `json:"count"`
	Largest int               `json:"largest"`
	Labels  map[string]string `json:"labels,omitempty"`
	Top     []Component       `json:"top,omitempty"`
}

func (wccAnalysis) Compile(raw json.RawMessage) (Job, error) {
	var p wccParams
	if err := DecodeParams("wcc", raw, &p); err != nil {
		return nil, err
	}
	if err := p.check("wcc"); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *wccParams) Run(snap Snapshot, lim SnapshotLimits) (any, error) {
	lim = lim.withDefaults()
	x, err := buildIndex(snap, lim)
	if err != nil {
		return nil, err
	}
	n := x.n()
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for v := range int32(n) {
		for _, u := range x.out(v) {
			a, b := find(v), find(u)
			if a != b { // the smaller id is the root: the smallest handle labels
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	size := make([]int, n)
	res := Components{}
	for v := range int32(n) {
		r := find(v)
		if size[r] == 0 {
			res.Count++
		}
		size[r]++
		res.Largest = max(res.Largest, size[r])
	}
	switch {
	case len(p.Nodes) > 0:
		res.Labels = map[string]string{}
		for _, h := range p.Nodes {
			if id, ok := x.ids[h]; ok {
				res.Labels[h] = x.handles[find(id)]
			}
		}
	case p.Top == 0:
		if n > lim.ResultsMax {
			return nil, fmt.Errorf("%w: wcc would return %d vertices (ResultsMax %d); ask for top or nodes", ErrTooLarge, n, lim.ResultsMax)
		}
		res.Labels = make(map[string]string, n)
		for v := range int32(n) {
			res.Labels[x.handles[v]] = x.handles[find(v)]
		}
	}
	if p.Top > 0 {
		var roots []int32
		for v := range int32(n) {
			if parent[v] == v {
				roots = append(roots, v)
			}
		}
		slices.SortFunc(roots, func(a, b int32) int {
			if c := cmp.Compare(size[b], size[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, r := range roots[:min(p.Top, len(roots))] {
			res.Top = append(res.Top, Component{Label: x.handles[r], Size: size[r]})
		}
	}
	return res, nil
}
