package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	h := History{
		{Index: 0, Process: 0, Type: Invoke, F: FTxn, Time: 10,
			Value: Txn{Append(3, 7), ReadNil(3), Write(4, 1), ReadReg(4, 1)}},
		{Index: 1, Process: 0, Type: OK, F: FTxn, Time: 20,
			Value: Txn{Append(3, 7), ReadList(3, []int64{1, 7}), Write(4, 1), ReadReg(4, 1), ReadList(5, []int64{})}},
		{Index: 2, Process: Nemesis, Type: Info, F: "start-partition", Time: 30},
		{Index: 3, Process: 2, Type: Invoke, F: FTransfer, Value: Transfer{From: 1, To: 2, Amount: 5}, Time: 40},
		{Index: 4, Process: 2, Type: OK, F: FRead, Value: map[int64]int64{2: 5, -1: 3}, Time: 50},
		{Index: 5, Process: 3, Type: Invoke, F: FAdd, Value: int64(-9), Time: 60, After: Ref(1)},
		{Index: 6, Process: 3, Type: OK, F: FRead, Value: []int64{1, 2}, Time: 70},
	}
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(h) {
		t.Fatalf("%d lines for %d ops", n, len(h))
	}
	for _, want := range []string{`["append",3,7]`, `["r",3,null]`, `["r",3,[1,7]]`, `["r",4,1]`, `["r",5,[]]`,
		`"process":"nemesis"`, `{"amount":5,"from":1,"to":2}`, `{"-1":3,"2":5}`, `"after":1`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, buf.String())
		}
	}
	var tx Txn
	if err := json.Unmarshal([]byte(`[["append",3,7],["r",3,[1,7]],["r",4,null],["w",4,2]]`), &tx); err != nil ||
		!reflect.DeepEqual(tx, Txn{Append(3, 7), ReadList(3, []int64{1, 7}), ReadNil(4), Write(4, 2)}) {
		t.Fatalf("Txn from JSON: %v %+v", err, tx)
	}
	got, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, h)
	}
}

// Jepsen writes keywords with colons; the index may be absent.
func TestReadJepsenStyle(t *testing.T) {
	in := `{"type":":invoke","f":":txn","value":[[":append",1,2],[":r",1,null]],"process":0,"time":5}

{"type":":ok","f":":txn","value":[[":append",1,2],[":r",1,[2]]],"process":0,"time":9}
{"type":":info","f":":kill","value":null,"process":":nemesis","time":11}
`
	h, err := ReadHistory(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || h[1].Index != 1 || h[1].Type != OK || h[1].F != FTxn || h[2].Process != Nemesis {
		t.Fatalf("decoded %+v", h)
	}
	if got := h[1].Value.(Txn)[1]; !reflect.DeepEqual(got, ReadList(1, []int64{2})) {
		t.Fatalf("read %+v", got)
	}
	res, err := CheckListAppend(h)
	wantTypes(t, res, err)
}

func TestReadErrors(t *testing.T) {
	for _, line := range []string{
		`{"type":"ok","f":"txn","value":[["append",1]],"process":0}`,
		`{"type":"ok","f":"txn","value":[["append",1,1.5]],"process":0}`,
		`{"type":"ok","f":"txn","value":[["cas",1,2]],"process":0}`,
		`{"type":"done","f":"txn","process":0}`,
		`{"type":"ok","f":"read","value":{"x":1},"process":0}`,
		`{"type":"ok","f":"read","process":"alice"}`,
		`{"type":"ok","f":"read","process":-3}`,
		`{"type":"ok","f":"read"}`,
		`not json`,
	} {
		_, err := ReadHistory(strings.NewReader(line + "\n"))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v, want ErrMalformed", line, err)
		}
	}
	if err := WriteHistory(io.Discard, History{{Value: 3}}); err == nil {
		t.Error("writing an int value (not int64) succeeded")
	}
}

func TestPairs(t *testing.T) {
	h := hist(
		inv(0, ap(1, 1)), inv(1, ap(1, 2)), Op{Process: Nemesis, Type: Info, F: "kill"},
		ok(1, ap(1, 2)), info(0, ap(1, 1)), inv(2, ap(1, 3)), inv(1, r(1)), fail(1, r(1)))
	ps, err := Pairs(h)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%d:%d-%d:%s", p.Invoke.Process, p.InvokePos, p.CompletePos, p.Type()))
	}
	want := []string{"0:0-4:info", "1:1-3:ok", "2:5--1:info", "1:6-7:fail"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	if !ps[1].Before(ps[2]) || ps[0].Before(ps[2]) || ps[2].Before(ps[3]) || ps[1].Before(ps[0]) {
		t.Fatal("Before disagrees with completion order")
	}
	if _, err := Pairs(hist(inv(0, r(1)), ok(0, r(1)), Op{Process: 0, Type: OK, F: "add"})); !errors.Is(err, ErrMalformed) {
		t.Fatalf("completion without invocation: %v", err)
	}
	if _, err := Pairs(hist(inv(0, r(1)), Op{Process: 0, Type: OK, F: "add"})); !errors.Is(err, ErrMalformed) {
		t.Fatalf("mismatched f: %v", err)
	}
}

// Clients record concurrently; the history stays well formed.
func TestRecorderConcurrent(t *testing.T) {
	var rec Recorder
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				v := int64(p*1000 + i)
				rec.Invoke(p, FTxn, Txn{Append(int64(p), v)}, 0)
				rec.Complete(p, OK, FTxn, Txn{Append(int64(p), v)}, 0)
			}
		}()
	}
	wg.Wait()
	h := rec.History()
	for i, op := range h {
		if op.Index != i {
			t.Fatalf("op %d has index %d", i, op.Index)
		}
	}
	res, err := CheckListAppend(h)
	wantTypes(t, res, err)
	if res.OK != 400 {
		t.Fatalf("%d OK, want 400", res.OK)
	}
}

func FuzzReadHistory(f *testing.F) {
	f.Add([]byte(`{"index":0,"type":"invoke","f":"txn","value":[["append",3,7],["r",3,null]],"process":0,"time":1}`))
	f.Add([]byte(`{"type":":ok","f":"read","value":{"0":10,"1":-3},"process":":nemesis"}`))
	f.Add([]byte(`{"type":"ok","f":"transfer","value":{"from":1,"to":2,"amount":3},"process":4,"after":2}`))
	f.Add([]byte(`{"type":"ok","f":"read","value":[1,2,3],"process":1}` + "\n\n" + `{"type":"fail"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHistory(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteHistory(&buf, h); err != nil {
			t.Fatalf("re-encoding a decoded history: %v", err)
		}
		h2, err := ReadHistory(&buf)
		if err != nil {
			t.Fatalf("decoding our own output: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(h, h2) {
			t.Fatalf("round trip changed the history:\n%#v\n%#v", h, h2)
		}
		// Checkers never panic on a decoded history.
		CheckListAppend(h)
		CheckRWRegister(h)
		CheckSetFull(h)
		CheckSideband(h)
		CheckBank(h, BankConfig{Accounts: []int64{0, 1}, Total: 10})
		CheckRing(h, 3)
	})
}

// A history file as a fault test would write it: a reader that completes
// after a writer, seeing one of its appends but not the other, is G-single
// (read skew) without needing real time.
func TestReadFile(t *testing.T) {
	f, err := os.Open("testdata/read_skew.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := CheckListAppend(h)
	wantTypes(t, res, err, "G-single")
	if res.Ops != 4 || res.OK != 2 {
		t.Fatalf("ops %d ok %d, want 4 and 2 (the nemesis op is not counted)", res.Ops, res.OK)
	}
}
