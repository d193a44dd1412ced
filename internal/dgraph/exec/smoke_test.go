package exec

import "testing"

const peopleSchema = `
name: string @index(exact, term) @lang .
age: int @index(int) .
friend: [uid] @reverse @count .
dgraph.type: [string] @index(exact) .
type Person { name age friend }
`

const peopleData = `
<0x1> <name> "Alice" .
<0x1> <name> "Alicia"@es .
<0x1> <age> "30" .
<0x1> <dgraph.type> "Person" .
<0x1> <friend> <0x2> (close=true, since=2010) .
<0x1> <friend> <0x3> .
<0x2> <name> "Bob" .
<0x2> <age> "25" .
<0x2> <dgraph.type> "Person" .
<0x2> <friend> <0x3> .
<0x3> <name> "Carol Ann" .
<0x3> <age> "35" .
<0x3> <dgraph.type> "Person" .
<0x4> <name> "Dave" .
`

// TestOutputBytes checks Dgraph's JSON byte for byte: keys in the order the
// query asks for them, lists for blocks and edges, typed scalars.
func TestOutputBytes(t *testing.T) {
	f := newFixture(t, peopleSchema+"born: datetime .\nscore: float .\n",
		peopleData+"<0x1> <born> \"1990-05-17T10:00:00Z\" .\n<0x1> <score> \"2.5\" .\n<0x2> <score> \"3\" .\n"+
			"<0x6> <name> \"Fay\"@en (origin=\"fr\") .\n<0x6> <name> \"F\" .\n<0x6> <dgraph.type> \"Person\" .\n"+
			"<0x6> <friend> <0x1> (since=2001, close=true) .\n")
	for _, c := range []struct{ q, want string }{
		{`{ q(func: uid(0x1)) { uid name age friend { name } } }`,
			`{"q":[{"uid":"0x1","name":"Alice","age":30,"friend":[{"name":"Bob"},{"name":"Carol Ann"}]}]}`},
		{`{ b(func: uid(0x2)) { score age } a(func: uid(0x1)) { born score } }`,
			`{"b":[{"score":3,"age":25}],"a":[{"born":"1990-05-17T10:00:00Z","score":2.5}]}`},
		{`{ q(func: uid(0x4)) { age } }`, `{"q":[]}`},
		{`{ z(func: uid(f)) { name } a(func: uid(0x4)) { name } var(func: uid(0x2)) { f as friend } }`,
			`{"z":[{"name":"Carol Ann"}],"a":[{"name":"Dave"}]}`},
		{`{ q(func: uid(0x6)) { name@en @facets(o: origin) friend @facets(since, c: close) { uid } } }`,
			`{"q":[{"o":"fr","name@en":"Fay","friend":[{"uid":"0x1","c":true,"friend|since":2001}]}]}`},
		{`{ q(func: uid(0x6)) { name@en @facets friend @facets { uid } } }`,
			`{"q":[{"name@en|origin":"fr","name@en":"Fay","friend":[{"uid":"0x1","friend|close":true,"friend|since":2001}]}]}`},
		{`{ q(func: uid(0x6)) { expand(_all_) } }`,
			`{"q":[{"name":"F","name@en|origin":"fr","name@en":"Fay"}]}`},
		{`{ var(func: uid(0x6)) { name@en @facets(v as origin) } q(func: uid(v)) { val(v) } }`,
			`{"q":[{"val(v)":"fr"}]}`},
	} {
		if got := f.query(t, c.q, nil); string(got.Data) != c.want {
			t.Errorf("%s\ngot  %s\nwant %s", c.q, got.Data, c.want)
		}
	}
}
