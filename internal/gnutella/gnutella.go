// Package gnutella embeds SNAP's p2p-Gnutella31 graph (62,586 vertices,
// 147,892 edges, with a weighted copy) and reference results of BFS, SSSP,
// WCC, PageRank and LCC computed by another graph engine (data/README.md), so
// tests have an oracle wherever the repository is checked out. Test use only.
package gnutella

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
)

//go:embed data/*.gz
var files embed.FS

// Open returns the decompressed content of one file, e.g. "p2p-31.e".
func Open(name string) (io.ReadCloser, error) {
	f, err := files.Open("data/" + name + ".gz")
	if err != nil {
		return nil, fmt.Errorf("gnutella: %s: %w", name, err)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{z, f}, nil
}

type readCloser struct {
	*gzip.Reader
	f io.Closer
}

func (r readCloser) Close() error {
	r.Reader.Close()
	return r.f.Close()
}
