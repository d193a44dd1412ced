package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestReferenceIsGenerated checks that docs/programs-reference.md is what
// the generator writes from the registry now.
func TestReferenceIsGenerated(t *testing.T) {
	want, err := generate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../docs/programs-reference.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/programs-reference.md is stale: run go run ./internal/doctest/progref (or make generate)")
	}
}
