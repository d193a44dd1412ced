package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// LineMax is the longest JSON line the Reader accepts (bytes). A set-full
// read of a million elements is about 8 MiB.
const LineMax = 64 << 20

// opJSON is an Op on the wire, fields in Jepsen's order.
type opJSON struct {
	Index   *int            `json:"index,omitempty"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Value   json.RawMessage `json:"value"`
	Process json.RawMessage `json:"process"`
	Time    int64           `json:"time"`
	After   *int            `json:"after,omitempty"`
}

// MarshalJSON encodes op as one Jepsen-style JSON object: micro-operations
// as arrays (["append",3,7]), keys and values as integers, the nemesis
// process as "nemesis".
func (op Op) MarshalJSON() ([]byte, error) {
	v, err := marshalValue(op.Value)
	if err != nil {
		return nil, fmt.Errorf("check: index %d: %w", op.Index, err)
	}
	proc := []byte(strconv.Itoa(op.Process))
	if op.Process == Nemesis {
		proc = []byte(`"nemesis"`)
	}
	idx := op.Index
	return json.Marshal(opJSON{Index: &idx, Type: string(op.Type), F: op.F, Value: v,
		Process: proc, Time: op.Time, After: op.After})
}

// UnmarshalJSON decodes one operation. Leading colons (":ok") are accepted;
// a missing index decodes as -1 (ReadHistory fills in positions).
func (op *Op) UnmarshalJSON(b []byte) error {
	var j opJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*op = Op{Index: -1, Type: Type(strings.TrimPrefix(j.Type, ":")), F: strings.TrimPrefix(j.F, ":"),
		Time: j.Time, After: j.After}
	if j.Index != nil {
		op.Index = *j.Index
	}
	switch op.Type {
	case Invoke, OK, Fail, Info:
	default:
		return fmt.Errorf("unknown type %q", j.Type)
	}
	if err := decodeProcess(j.Process, op); err != nil {
		return err
	}
	v, err := decodeValue(j.Value, op.F == FTxn)
	if err != nil {
		return fmt.Errorf("value: %w", err)
	}
	op.Value = v
	return nil
}

func decodeProcess(raw json.RawMessage, op *Op) error {
	if len(raw) == 0 {
		return fmt.Errorf("missing process")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if strings.TrimPrefix(s, ":") != "nemesis" {
			return fmt.Errorf("process %q is neither an integer nor nemesis", s)
		}
		op.Process = Nemesis
		return nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 {
		return fmt.Errorf("process %s is not a non-negative integer", raw)
	}
	op.Process = n
	return nil
}

// decodeValue turns a JSON value into the checker's value types by shape:
// null → nil, integer → int64, array → Txn (when txn) or []int64, object →
// Transfer (keys from/to/amount) or map[int64]int64.
func decodeValue(raw json.RawMessage, txn bool) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case json.Number:
		return toInt(x)
	case []any:
		if txn {
			return decodeTxn(x)
		}
		return toInts(x)
	case map[string]any:
		return decodeObject(x)
	}
	return nil, fmt.Errorf("unsupported value %s", raw)
}

func toInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	return strconv.ParseInt(string(n), 10, 64)
}

func toInts(xs []any) ([]int64, error) {
	out := make([]int64, len(xs))
	for i, x := range xs {
		n, err := toInt(x)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func decodeObject(m map[string]any) (any, error) {
	if _, ok := m["from"]; ok {
		var t Transfer
		var err [3]error
		t.From, err[0] = toInt(m["from"])
		t.To, err[1] = toInt(m["to"])
		t.Amount, err[2] = toInt(m["amount"])
		for _, e := range err {
			if e != nil {
				return nil, fmt.Errorf("transfer: %w", e)
			}
		}
		return t, nil
	}
	out := make(map[int64]int64, len(m))
	for k, v := range m {
		kn, err := strconv.ParseInt(strings.TrimPrefix(k, ":"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("map key %q is not an integer", k)
		}
		vn, err := toInt(v)
		if err != nil {
			return nil, fmt.Errorf("map key %q: %w", k, err)
		}
		out[kn] = vn
	}
	return out, nil
}

func decodeTxn(xs []any) (Txn, error) {
	t := make(Txn, 0, len(xs))
	for i, x := range xs {
		a, ok := x.([]any)
		if !ok || len(a) != 3 {
			return nil, fmt.Errorf("micro-op %d is not a 3-element array", i)
		}
		f, _ := a[0].(string)
		m := Mop{F: strings.TrimPrefix(f, ":")}
		k, err := toInt(a[1])
		if err != nil {
			return nil, fmt.Errorf("micro-op %d key: %w", i, err)
		}
		m.Key = k
		if err := decodeMopValue(&m, a[2]); err != nil {
			return nil, fmt.Errorf("micro-op %d: %w", i, err)
		}
		t = append(t, m)
	}
	return t, nil
}

func decodeMopValue(m *Mop, v any) error {
	switch m.F {
	case MopAppend, MopWrite:
		n, err := toInt(v)
		m.Value = n
		return err
	case MopRead:
		switch x := v.(type) {
		case nil:
			m.Nil = true
		case []any:
			l, err := toInts(x)
			if err != nil {
				return err
			}
			m.List = l
		default:
			n, err := toInt(v)
			m.Value = n
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown micro-op %q", m.F)
}

// MarshalJSON encodes m as ["append",k,v], ["w",k,v] or ["r",k,value].
func (m Mop) MarshalJSON() ([]byte, error) {
	var v any
	switch {
	case m.F != MopRead:
		v = m.Value
	case m.Nil:
		v = nil
	case m.List != nil:
		v = m.List
	default:
		v = m.Value
	}
	return json.Marshal([]any{m.F, m.Key, v})
}

// UnmarshalJSON decodes ["append",k,v], ["w",k,v] or ["r",k,value].
func (m *Mop) UnmarshalJSON(b []byte) error {
	t, err := decodeValue(append(append([]byte{'['}, b...), ']'), true)
	if err != nil {
		return err
	}
	if tx, _ := t.(Txn); len(tx) == 1 {
		*m = tx[0]
		return nil
	}
	return fmt.Errorf("micro-op %s is not one array", b)
}

func marshalValue(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil, int64, []int64, Txn:
		return json.Marshal(x)
	case Transfer:
		return json.Marshal(map[string]int64{"from": x.From, "to": x.To, "amount": x.Amount})
	case map[int64]int64:
		return marshalIntMap(x), nil
	}
	return nil, fmt.Errorf("value of type %T is not one of nil, int64, []int64, map[int64]int64, Transfer, Txn", v)
}

// marshalIntMap writes keys in numeric order so output is deterministic.
func marshalIntMap(m map[int64]int64) json.RawMessage {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":%d`, k, m[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Reader reads a history as JSON lines, one operation per line. Blank lines
// are skipped. It is not safe for concurrent use.
type Reader struct {
	sc   *bufio.Scanner
	line int
	pos  int
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), LineMax)
	return &Reader{sc: sc}
}

// Read returns the next operation, or io.EOF after the last. An operation
// without an index gets its position in the stream.
func (r *Reader) Read() (Op, error) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(b, &op); err != nil {
			return Op{}, fmt.Errorf("%w: line %d: %v", ErrMalformed, r.line, err)
		}
		if op.Index < 0 {
			op.Index = r.pos
		}
		r.pos++
		return op, nil
	}
	if err := r.sc.Err(); err != nil {
		return Op{}, fmt.Errorf("check: line %d: %w", r.line+1, err)
	}
	return Op{}, io.EOF
}

// ReadHistory reads JSON lines until EOF.
func ReadHistory(r io.Reader) (History, error) {
	rd := NewReader(r)
	var h History
	for {
		op, err := rd.Read()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, err
		}
		h = append(h, op)
	}
}

// Writer writes operations as JSON lines. Call Flush at the end. It is not
// safe for concurrent use.
type Writer struct {
	w *bufio.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Write writes one operation and a newline.
func (w *Writer) Write(op Op) error {
	b, err := op.MarshalJSON()
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.w.Write(b)
	return err
}

// Flush writes buffered lines to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// WriteHistory writes h as JSON lines.
func WriteHistory(w io.Writer, h History) error {
	wr := NewWriter(w)
	for _, op := range h {
		if err := wr.Write(op); err != nil {
			return err
		}
	}
	return wr.Flush()
}
