package dgraph

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// Fact runs: a direct load whose facts outgrow half its memory sorts each
// partition's facts by node (then file order) and writes them to a run
// file; the reduce phase merges a partition's runs, oldest first, with the
// facts still in memory, so that each node's facts come out together in
// file order whatever run they are in.

// sortFacts sorts facts by node, then by file order.
func sortFacts(facts []dfact) {
	slices.SortFunc(facts, func(a, b dfact) int {
		if c := cmp.Compare(a.uid, b.uid); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// spillFacts writes every partition's facts to a run of its own and
// empties memory.
func (l *directLoad) spillFacts() error {
	err := parallel(len(l.parts), len(l.parts), func(i int) error {
		facts := l.parts[i]
		if len(facts) == 0 {
			return nil
		}
		sortFacts(facts)
		path := filepath.Join(l.sink.TempDir(), fmt.Sprintf("direct-facts-%d-%d", i, len(l.runs[i])))
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		l.runs[i] = append(l.runs[i], path)
		w := bufio.NewWriterSize(f, 1<<20)
		var buf []byte
		for j := range facts {
			buf = appendFact(buf[:0], &facts[j])
			if _, err := w.Write(buf); err != nil {
				_ = f.Close()
				return err
			}
		}
		if err := errors.Join(w.Flush(), f.Close()); err != nil {
			return err
		}
		clear(facts) // no strings kept alive
		l.parts[i] = facts[:0]
		return nil
	})
	l.bytes = 0
	l.stats.Runs++
	return err
}

// appendFact encodes one fact: uid, dst, kind, predicate (index+1, 0 for
// none), batch, language, value and facets, each value length-prefixed.
func appendFact(b []byte, f *dfact) []byte {
	b = binary.AppendUvarint(b, f.uid)
	b = binary.AppendUvarint(b, f.dst)
	b = append(b, f.kind)
	p := uint64(0)
	if f.pred != nil {
		p = uint64(f.pred.idx) + 1
	}
	b = binary.AppendUvarint(b, p)
	b = binary.AppendUvarint(b, uint64(f.batch))
	b = appendString(b, f.lang)
	b = appendValue(b, f.val)
	b = binary.AppendUvarint(b, uint64(len(f.facets)))
	for _, fc := range f.facets {
		b = appendValue(appendString(b, fc.Key), fc.Value)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendValue(b []byte, v value.Value) []byte {
	e := value.Append(nil, v)
	return append(binary.AppendUvarint(b, uint64(len(e))), e...)
}

// factReader decodes one run.
type factReader struct {
	l    *directLoad
	f    *os.File
	r    *bufio.Reader
	head dfact
	ok   bool // head holds the next fact
	buf  []byte
}

func (fr *factReader) next() error {
	fr.ok = false
	uid, err := binary.ReadUvarint(fr.r)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	f := dfact{uid: uid}
	if f.dst, err = binary.ReadUvarint(fr.r); err != nil {
		return fr.corrupt(err)
	}
	if f.kind, err = fr.r.ReadByte(); err != nil {
		return fr.corrupt(err)
	}
	p, err := binary.ReadUvarint(fr.r)
	if err != nil || p > uint64(len(fr.l.predList)) {
		return fr.corrupt(err)
	}
	if p > 0 {
		f.pred = fr.l.predList[p-1]
	}
	batch, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return fr.corrupt(err)
	}
	f.batch = int32(batch)
	if f.lang, err = fr.string(); err != nil {
		return fr.corrupt(err)
	}
	if f.val, err = fr.value(); err != nil {
		return fr.corrupt(err)
	}
	n, err := binary.ReadUvarint(fr.r)
	if err != nil || n > 1<<20 {
		return fr.corrupt(err)
	}
	for range n {
		var fc rdf.Facet
		if fc.Key, err = fr.string(); err != nil {
			return fr.corrupt(err)
		}
		if fc.Value, err = fr.value(); err != nil {
			return fr.corrupt(err)
		}
		f.facets = append(f.facets, fc)
	}
	fr.head, fr.ok = f, true
	return nil
}

func (fr *factReader) corrupt(err error) error {
	return fmt.Errorf("%w: fact run %s: %v", ErrCorrupt, fr.f.Name(), err)
}

func (fr *factReader) bytes() ([]byte, error) {
	n, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, errors.New("length out of range")
	}
	if uint64(cap(fr.buf)) < n {
		fr.buf = make([]byte, n)
	}
	fr.buf = fr.buf[:n]
	_, err = io.ReadFull(fr.r, fr.buf)
	return fr.buf, err
}

func (fr *factReader) string() (string, error) {
	b, err := fr.bytes()
	return string(b), err
}

func (fr *factReader) value() (value.Value, error) {
	b, err := fr.bytes()
	if err != nil {
		return value.Value{}, err
	}
	v, rest, err := value.Decode(b)
	if err == nil && len(rest) != 0 {
		err = errors.New("trailing bytes after a value")
	}
	return v, err
}

// nodesOf calls fn with each node's facts of partition i, in file order:
// its runs merged, oldest first, with the (sorted) facts in memory.
func (l *directLoad) nodesOf(i int, fn func([]dfact) error) error {
	mem := l.parts[i]
	if len(l.runs[i]) == 0 {
		for len(mem) > 0 {
			j := 1
			for j < len(mem) && mem[j].uid == mem[0].uid {
				j++
			}
			if err := fn(mem[:j]); err != nil {
				return err
			}
			mem = mem[j:]
		}
		return nil
	}
	var rs []*factReader
	defer func() {
		for _, fr := range rs {
			_ = fr.f.Close()
		}
	}()
	for _, path := range l.runs[i] {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		fr := &factReader{l: l, f: f, r: bufio.NewReaderSize(f, 1<<20)}
		rs = append(rs, fr)
		if err := fr.next(); err != nil {
			return err
		}
	}
	var group []dfact
	for {
		uid, any := uint64(0), false
		for _, fr := range rs {
			if fr.ok && (!any || fr.head.uid < uid) {
				uid, any = fr.head.uid, true
			}
		}
		if len(mem) > 0 && (!any || mem[0].uid < uid) {
			uid, any = mem[0].uid, true
		}
		if !any {
			return nil
		}
		group = group[:0]
		for _, fr := range rs {
			for fr.ok && fr.head.uid == uid {
				group = append(group, fr.head)
				if err := fr.next(); err != nil {
					return err
				}
			}
		}
		for len(mem) > 0 && mem[0].uid == uid {
			group = append(group, mem[0])
			mem = mem[1:]
		}
		if err := fn(group); err != nil {
			return err
		}
	}
}
