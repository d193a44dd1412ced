package rdf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
)

// DefaultLineLenMax is the default bound on one line: generous for GeoJSON
// polygons, small enough that a file without newlines cannot exhaust memory.
const DefaultLineLenMax = 16 << 20

// Reader reads N-Quads one statement at a time from a stream, skipping blank
// and comment lines. A bad line is reported as an *Error and the next Read
// goes on with the line after it; an I/O error ends the stream. Not safe for
// concurrent use.
type Reader struct {
	// LineLenMax bounds one line in bytes (default DefaultLineLenMax); a
	// longer line is reported as an error and skipped. Set it before the
	// first Read.
	LineLenMax int

	br    *bufio.Reader
	long  []byte // a line longer than br's buffer, assembled
	line  int    // lines read so far
	bytes int64  // bytes read so far
	err   error  // sticky: io.EOF or an I/O error
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{LineLenMax: DefaultLineLenMax, br: bufio.NewReaderSize(r, 64<<10)}
}

// Read returns the next statement, or io.EOF after the last one.
func (r *Reader) Read() (NQuad, error) {
	for {
		b, err := r.readLine()
		if err != nil {
			return NQuad{}, err
		}
		if blankOrComment(b) {
			continue
		}
		nq, ok, err := parseLine(string(b), r.line)
		if err != nil || ok {
			return nq, err
		}
	}
}

// All yields every statement with its error; it stops after an I/O error and
// at the end of the stream, not after a bad line.
func (r *Reader) All() iter.Seq2[NQuad, error] {
	return func(yield func(NQuad, error) bool) {
		for {
			nq, err := r.Read()
			if err == io.EOF {
				return
			}
			if !yield(nq, err) {
				return
			}
			var pe *Error
			if err != nil && !errors.As(err, &pe) {
				return
			}
		}
	}
}

// Line is the number of the line the last Read ended on (from 1).
func (r *Reader) Line() int { return r.line }

// Offset is the number of bytes read so far.
func (r *Reader) Offset() int64 { return r.bytes }

// readLine returns the next line without its "\n"; the slice is valid until
// the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.long = r.long[:0]
	tooLong := false
	for {
		frag, err := r.br.ReadSlice('\n')
		r.bytes += int64(len(frag))
		switch {
		case err == bufio.ErrBufferFull:
			if len(r.long)+len(frag) > r.LineLenMax {
				tooLong = true
				r.long = r.long[:0]
			}
			if !tooLong {
				r.long = append(r.long, frag...)
			}
			continue
		case err == io.EOF && len(frag) == 0 && len(r.long) == 0 && !tooLong:
			r.err = io.EOF
			return nil, io.EOF
		case err != nil && err != io.EOF:
			r.err = fmt.Errorf("rdf: line %d: %w", r.line+1, err)
			return nil, r.err
		case err == io.EOF:
			r.err = io.EOF // the last line has no newline; the next call ends
		}
		r.line++
		if len(r.long) > 0 || tooLong {
			if len(r.long)+len(frag) > r.LineLenMax {
				tooLong = true
			}
			r.long = append(r.long, frag...)
			frag = r.long
		} else if len(frag) > r.LineLenMax {
			tooLong = true
		}
		if tooLong {
			return nil, &Error{Line: r.line, Col: 1, Err: ErrSyntax,
				Msg: fmt.Sprintf("line longer than %d bytes", r.LineLenMax)}
		}
		return bytes.TrimSuffix(frag, []byte{'\n'}), nil
	}
}

// blankOrComment spots the lines to skip without converting them to strings.
func blankOrComment(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
			continue
		case '#':
			return true
		}
		return false
	}
	return true
}

// Decompress returns a reader of r's content: r itself, or a gzip reader
// over it when r starts with the gzip magic bytes (whatever the file name).
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("rdf: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("rdf: gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// Open opens an N-Quads file, transparently decompressing gzip (.rdf.gz,
// .nq.gz, or any gzip content). Close closes the file.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := Decompress(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return readCloser{Reader: r, f: f}, nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (rc readCloser) Close() error {
	if zr, ok := rc.Reader.(*gzip.Reader); ok {
		zr.Close()
	}
	return rc.f.Close()
}
