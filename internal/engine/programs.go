package engine

import "github.com/weft-db/weft/internal/nodeprog"

// programDoc is the one-line description of each built-in program and
// analysis, as GET /v1/programs lists them (nodeprog's parameter metadata,
// which docs/programs-reference.md is generated from).
func programDoc(name string) string { return nodeprog.Summary(name) }
