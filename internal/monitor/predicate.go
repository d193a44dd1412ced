package monitor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limits on a Spec: Validate refuses anything larger.
const (
	ServersMax    = 1 << 12 // servers (processes) in a spec
	PredicatesMax = 1 << 16 // predicates in a spec
	ClausesMax    = 1 << 16 // clauses in one predicate
	LiteralsMax   = 1 << 8  // literals in one clause
)

// Type is the class of a predicate (¬P, the violation to detect), which picks
// the detector rule and the monitor algorithm (§V, Fig. 3).
type Type uint8

const (
	// Conjunctive: one clause, a conjunction of local predicates (one per
	// server). Detectors send only intervals in which their local part holds
	// (Fig. 5); the monitor is Garg–Waldecker.
	Conjunctive Type = iota + 1
	// Linear: a DNF whose violations are closed under meet. Here that means a
	// conjunction of per-server disjunctions written out in DNF: every clause
	// names every server, and the clauses are all combinations of the
	// per-server parts. Detectors send intervals in which some part holds; the
	// monitor is Chase–Garg forbidden-state advancement on one global state.
	Linear
	// Semilinear: any DNF of local literals. Detectors send every state on a
	// relevant PUT (Fig. 5 caption); the monitor advances along semi-forbidden
	// states, one global state per clause over shared per-server queues.
	Semilinear
)

func (t Type) String() string {
	switch t {
	case Conjunctive:
		return "conjunctive"
	case Linear:
		return "linear"
	case Semilinear:
		return "semilinear"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// ParseType reads "conjunctive", "linear" or "semilinear" (also "semi-linear").
func ParseType(s string) (Type, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "conjunctive":
		return Conjunctive, nil
	case "linear":
		return Linear, nil
	case "semilinear", "semi-linear":
		return Semilinear, nil
	}
	return 0, fmt.Errorf("%w: unknown predicate type %q (want conjunctive, linear or semilinear)", ErrSpec, s)
}

// Op compares a variable with a literal's value.
type Op uint8

const (
	// Eq holds when the variable equals the value.
	Eq Op = iota
	// Ne holds when it does not (an absent key reads as "").
	Ne
)

func (o Op) String() string {
	switch o {
	case Eq:
		return "eq"
	case Ne:
		return "ne"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

func parseOp(s string) (Op, error) {
	switch s {
	case "", "eq", "=", "==":
		return Eq, nil
	case "ne", "!=":
		return Ne, nil
	}
	return 0, fmt.Errorf("%w: unknown op %q (want eq or ne)", ErrSpec, s)
}

// Literal is one comparison of a key on one server. Values are text; a key
// never written reads as the empty string.
type Literal struct {
	Server int
	Key    string
	Op     Op
	Value  string
}

func (l Literal) holds(v string) bool { return (v == l.Value) == (l.Op == Eq) }

func (l Literal) String() string {
	op := "="
	if l.Op == Ne {
		op = "≠"
	}
	return fmt.Sprintf("%s@%d%s%q", l.Key, l.Server, op, l.Value)
}

// Clause is a conjunction of literals.
type Clause struct {
	ID       string // optional label, as the paper's <id>
	Literals []Literal
}

// Predicate is one monitored ¬P in disjunctive normal form: a violation is a
// consistent cut in which some clause holds.
type Predicate struct {
	Name    string
	Type    Type
	Clauses []Clause
}

// Spec is the set of predicates monitored together over Servers servers
// (numbered 0..Servers−1). Validate before use; do not modify it afterwards.
type Spec struct {
	Servers    int
	Predicates []Predicate

	compiled []*compiled
}

// Validate checks the spec and prepares it for detectors and monitors. It is
// idempotent. Errors wrap ErrSpec and name the predicate, clause and literal.
func (s *Spec) Validate() error {
	if s.compiled != nil {
		return nil
	}
	if s.Servers < 1 || s.Servers > ServersMax {
		return fmt.Errorf("%w: servers %d not in [1, %d]", ErrSpec, s.Servers, ServersMax)
	}
	if len(s.Predicates) < 1 || len(s.Predicates) > PredicatesMax {
		return fmt.Errorf("%w: %d predicates, want 1 to %d", ErrSpec, len(s.Predicates), PredicatesMax)
	}
	names := make(map[string]int, len(s.Predicates))
	out := make([]*compiled, len(s.Predicates))
	for i := range s.Predicates {
		p := &s.Predicates[i]
		if p.Name == "" {
			return fmt.Errorf("%w: predicate %d has no name", ErrSpec, i)
		}
		if j, dup := names[p.Name]; dup {
			return fmt.Errorf("%w: predicates %d and %d are both named %q", ErrSpec, j, i, p.Name)
		}
		names[p.Name] = i
		if err := validatePredicate(p, s.Servers); err != nil {
			return fmt.Errorf("%w: predicate %q: %w", ErrSpec, p.Name, err)
		}
		out[i] = compile(i, p, s.Servers)
	}
	s.compiled = out
	return nil
}

func validatePredicate(p *Predicate, servers int) error {
	switch p.Type {
	case Conjunctive, Linear, Semilinear:
	default:
		return fmt.Errorf("unknown type %d", p.Type)
	}
	if len(p.Clauses) < 1 || len(p.Clauses) > ClausesMax {
		return fmt.Errorf("%d clauses, want 1 to %d", len(p.Clauses), ClausesMax)
	}
	for k, c := range p.Clauses {
		if err := validateClause(c, servers); err != nil {
			return fmt.Errorf("clause %d: %w", k, err)
		}
	}
	switch p.Type {
	case Conjunctive:
		if len(p.Clauses) != 1 {
			return fmt.Errorf("typed conjunctive but has %d clauses: a conjunctive predicate is one conjunction "+
				"(type it semilinear, or make one predicate per clause)", len(p.Clauses))
		}
	case Linear:
		return checkProductForm(p)
	}
	return nil
}

func validateClause(c Clause, servers int) error {
	if len(c.Literals) < 1 || len(c.Literals) > LiteralsMax {
		return fmt.Errorf("%d literals, want 1 to %d", len(c.Literals), LiteralsMax)
	}
	type at struct {
		server int
		key    string
	}
	eq := map[at]string{}
	for i, l := range c.Literals {
		if l.Server < 0 || l.Server >= servers {
			return fmt.Errorf("literal %d (%s): server %d not in [0, %d)", i, l, l.Server, servers)
		}
		if l.Key == "" {
			return fmt.Errorf("literal %d: empty key", i)
		}
		if l.Op != Eq && l.Op != Ne {
			return fmt.Errorf("literal %d (%s): unknown op", i, l)
		}
		if l.Op != Eq {
			continue
		}
		if v, ok := eq[at{l.Server, l.Key}]; ok && v != l.Value {
			return fmt.Errorf("can never hold: %s@%d must equal both %q and %q", l.Key, l.Server, v, l.Value)
		}
		eq[at{l.Server, l.Key}] = l.Value
	}
	for i, l := range c.Literals {
		if v, ok := eq[at{l.Server, l.Key}]; ok && l.Op == Ne && v == l.Value {
			return fmt.Errorf("can never hold: literal %d (%s) contradicts %s@%d = %q", i, l, l.Key, l.Server, v)
		}
	}
	return nil
}

// checkProductForm accepts a linear predicate only if it is a conjunction of
// per-server disjunctions written out: every clause names the same servers,
// and the distinct clauses are exactly all combinations of the distinct
// per-server parts. Then a server none of whose parts holds is forbidden, so
// forbidden-state advancement never gets stuck.
func checkProductForm(p *Predicate) error {
	servers := clauseServers(p.Clauses[0])
	parts := make([]map[string]bool, len(servers))
	for i := range parts {
		parts[i] = map[string]bool{}
	}
	tuples := map[string]bool{}
	for k, c := range p.Clauses {
		if got := clauseServers(c); !slices.Equal(got, servers) {
			return fmt.Errorf("typed linear but clause %d names servers %v and clause 0 names %v: "+
				"every clause of a linear predicate names the same servers (or type it semilinear)", k, got, servers)
		}
		var tuple strings.Builder
		for i, srv := range servers {
			part := canonicalPart(c, srv)
			parts[i][part] = true
			tuple.WriteString(part)
			tuple.WriteByte('|')
		}
		tuples[tuple.String()] = true
	}
	product := 1
	for _, ps := range parts {
		product *= len(ps)
		if product > ClausesMax {
			break
		}
	}
	if product != len(tuples) {
		return fmt.Errorf("typed linear but its %d distinct clauses are not all %s combinations of its per-server "+
			"parts; write it as a conjunction of per-server disjunctions in full (or type it semilinear)",
			len(tuples), productLabel(product))
	}
	return nil
}

func productLabel(n int) string {
	if n > ClausesMax {
		return "the more than " + strconv.Itoa(ClausesMax)
	}
	return "the " + strconv.Itoa(n)
}

func clauseServers(c Clause) []int {
	var s []int
	for _, l := range c.Literals {
		s = append(s, l.Server)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// canonicalPart is the clause's literals on server srv, sorted and deduplicated.
func canonicalPart(c Clause, srv int) string {
	var ls []string
	for _, l := range c.Literals {
		if l.Server == srv {
			ls = append(ls, strconv.Quote(l.Key)+l.Op.String()+strconv.Quote(l.Value))
		}
	}
	slices.Sort(ls)
	return strings.Join(slices.Compact(ls), "&")
}

// compiled is a validated predicate in the form detectors and monitors use.
// Servers it names are numbered by slot (their rank in servers).
type compiled struct {
	index   int
	name    string
	typ     Type
	servers []int      // distinct servers named, ascending
	slotOf  []int      // server → slot, −1 if not named
	keys    [][]string // per slot: distinct keys named there, ascending
	clauses []cclause
	// clausesOf[s] lists the clauses naming slot s, ascending; a candidate's
	// truth bitset has one bit per entry, and local[s][b] holds the literals
	// of clause clausesOf[s][b] on slot s.
	clausesOf [][]int
	local     [][][]clit
}

type cclause struct {
	slots []int // slots named, ascending
	bit   []int // bit[j]: this clause's position in clausesOf[slots[j]]
}

type clit struct {
	key   int // index into keys[slot]
	op    Op
	value string
}

func compile(index int, p *Predicate, servers int) *compiled {
	c := &compiled{index: index, name: p.Name, typ: p.Type, slotOf: make([]int, servers)}
	keySet := map[int]map[string]bool{}
	for _, cl := range p.Clauses {
		for _, l := range cl.Literals {
			if keySet[l.Server] == nil {
				keySet[l.Server] = map[string]bool{}
				c.servers = append(c.servers, l.Server)
			}
			keySet[l.Server][l.Key] = true
		}
	}
	slices.Sort(c.servers)
	for i := range c.slotOf {
		c.slotOf[i] = -1
	}
	c.keys = make([][]string, len(c.servers))
	c.clausesOf = make([][]int, len(c.servers))
	c.local = make([][][]clit, len(c.servers))
	for s, srv := range c.servers {
		c.slotOf[srv] = s
		for k := range keySet[srv] {
			c.keys[s] = append(c.keys[s], k)
		}
		slices.Sort(c.keys[s])
	}
	for k, cl := range p.Clauses {
		var cc cclause
		for _, srv := range clauseServers(cl) {
			s := c.slotOf[srv]
			var lits []clit
			for _, l := range cl.Literals {
				if l.Server == srv {
					key, _ := slices.BinarySearch(c.keys[s], l.Key)
					lits = append(lits, clit{key: key, op: l.Op, value: l.Value})
				}
			}
			cc.slots = append(cc.slots, s)
			cc.bit = append(cc.bit, len(c.clausesOf[s]))
			c.clausesOf[s] = append(c.clausesOf[s], k)
			c.local[s] = append(c.local[s], lits)
		}
		c.clauses = append(c.clauses, cc)
	}
	return c
}

// slot returns the slot of a server, or −1.
func (c *compiled) slot(server int) int {
	if server < 0 || server >= len(c.slotOf) {
		return -1
	}
	return c.slotOf[server]
}

// truth sets in dst (resized) one bit per clause naming slot s: whether that
// clause's literals on s hold for the values.
func (c *compiled) truth(s int, values []string, dst []uint64) []uint64 {
	words := (len(c.clausesOf[s]) + 63) / 64
	dst = slices.Grow(dst[:0], words)[:words]
	clear(dst)
	for b, lits := range c.local[s] {
		ok := true
		for _, l := range lits {
			if (values[l.key] == l.value) != (l.op == Eq) {
				ok = false
				break
			}
		}
		if ok {
			dst[b/64] |= 1 << (b % 64)
		}
	}
	return dst
}

func anyBit(bits []uint64) bool {
	for _, w := range bits {
		if w != 0 {
			return true
		}
	}
	return false
}

func hasBit(bits []uint64, b int) bool { return bits[b/64]&(1<<(b%64)) != 0 }

// Keys lists the keys predicate p names on server, ascending: the order of a
// candidate's Values. It is nil if p does not name the server.
func (s *Spec) Keys(p, server int) []string {
	if p < 0 || p >= len(s.compiled) {
		return nil
	}
	c := s.compiled[p]
	if sl := c.slot(server); sl >= 0 {
		return c.keys[sl]
	}
	return nil
}

// ServersOf lists the servers predicate p names, ascending.
func (s *Spec) ServersOf(p int) []int {
	if p < 0 || p >= len(s.compiled) {
		return nil
	}
	return s.compiled[p].servers
}
