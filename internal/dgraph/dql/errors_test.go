package dql

import (
	"strconv"
	"strings"
	"testing"
)

// TestParseErrors: every syntax and validation error, with its line and
// column.
func TestParseErrors(t *testing.T) {
	for _, c := range []errCase{
		{"unterminated block", "{ me(func: uid(0x1)) { name }", 1, 30, "expected a query block or '}', found end of input"},
		{"missing open brace", "me(func: uid(0x1)) { name }", 1, 1, "expected '{', query, schema or fragment, found \"me\""},
		{"unknown top-level word", "mutation { set { <a> <b> <c> . } }", 1, 1, "mutation blocks are not queries: send them as mutations"},
		{"upsert is not a query", "upsert { query {} }", 1, 1, "upsert blocks are not queries: send them as mutations"},
		{"two query operations", "query a { } query b { }", 1, 13, "only one query operation is allowed per request"},
		{"schema with blocks", "schema {} { me(func: uid(1)) { uid } }", 1, 11, "a schema block cannot be combined with query blocks"},
		{"two schema blocks", "schema {} schema {}", 1, 11, "only one schema block is allowed"},
		{"bad schema key", "schema(predicate: name) {}", 1, 8, "expected pred or type inside schema(...), found \"predicate\""},
		{"empty schema list", "schema(pred: []) {}", 1, 14, "empty list"},
		{"block without parens", "{ me { name } }", 1, 6, "expected '(' after the block name \"me\", found '{'"},
		{"unknown root argument", "{ me(fun: uid(1)) { uid } }", 1, 6, "unknown argument \"fun\" of a query block"},
		{"root argument twice", "{ me(func: uid(1), first: 1, first: 2) { uid } }", 1, 30, "argument first given twice"},
		{"two funcs", "{ me(func: uid(1), func: uid(2)) { uid } }", 1, 20, "argument func given twice"},
		{"missing comma in args", "{ me(func: uid(1) first: 2) { uid } }", 1, 19, "expected ',' or ')', found \"first\""},
		{"from outside shortest", "{ me(func: uid(1), from: 0x1) { uid } }", 1, 20, "from is only allowed in shortest path blocks"},
		{"shortest without to", "{ shortest(from: 0x1) { friend } }", 1, 3, "a shortest block needs both from and to"},
		{"shortest with func", "{ shortest(func: uid(1), from: 0x1, to: 0x2) { friend } }", 1, 18, "a shortest block takes from and to, not func"},
		{"shortest numpaths zero", "{ shortest(from: 0x1, to: 0x2, numpaths: 0) { friend } }", 1, 3, "numpaths must be at least 1, found 0"},
		{"shortest from uid 0", "{ shortest(from: 0, to: 0x2) { friend } }", 1, 18, "from cannot be uid 0"},
		{"shortest weights reversed", "{ shortest(from: 1, to: 2, minweight: 5, maxweight: 1) { friend } }", 1, 3, "minweight 5 is greater than maxweight 1"},
		{"shortest from two nodes", "{ shortest(from: uid(0x1, 0x2), to: 2) { friend } }", 1, 18, "from takes one node: a uid or uid(v)"},
		{"first not a number", "{ me(func: uid(1), first: ten) { uid } }", 1, 27, "first must be an integer, found \"ten\""},
		{"negative offset", "{ me(func: uid(1), offset: -1) { uid } }", 1, 28, "offset must not be negative, found -1"},
		{"after not a uid", "{ me(func: uid(1), after: abc) { uid } }", 1, 27, "expected a uid (0x1f or 31), found \"abc\""},
		{"uid too large", "{ me(func: uid(0x10000000000000000)) { uid } }", 1, 16, "the uid value \"0x10000000000000000\" is too large"},
		{"minweight not finite", "{ shortest(from: 1, to: 2, minweight: 1e999) { friend } }", 1, 39, "minweight must be a finite number, found \"1e999\""},
		{"order by val and pred", "{ var(func: has(a)) { v as a } me(func: uid(v), orderasc: val(v), orderdesc: name) { uid } }", 1, 78, "ordering by a value variable cannot be combined with other orderings"},
		{"order twice", "{ me(func: has(a), orderasc: name, orderdesc: name) { uid } }", 1, 47, "ordering by name given twice"},
		{"order two languages", "{ me(func: has(a), orderasc: name@en:fr) { uid } }", 1, 30, "ordering by name can only use one language"},
		{"unknown function", "{ me(func: foo(name)) { uid } }", 1, 12, "unknown function foo"},
		{"var as function", "{ me(func: var(a)) { uid } }", 1, 12, "var() is not a function: use uid(v) for the nodes of a variable"},
		{"uid_in at root", "{ me(func: uid_in(friend, 0x1)) { uid } }", 1, 12, "uid_in cannot be used at the root; use it in @filter"},
		{"eq without value", "{ me(func: eq(name)) { uid } }", 1, 12, "eq takes a predicate and at least one value, found 0"},
		{"le two values", "{ me(func: le(age, 1, 2)) { uid } }", 1, 12, "le takes a predicate and one value, found 2"},
		{"between one value", "{ me(func: between(age, 1)) { uid } }", 1, 12, "between takes a predicate and two values, found 1"},
		{"has with a value", "{ me(func: has(name, \"x\")) { uid } }", 1, 12, "has takes only a predicate, found 1"},
		{"type without name", "{ me(func: type()) { uid } }", 1, 17, "expected an argument of type, found ')'"},
		{"type two names", "{ me(func: type(A, B)) { uid } }", 1, 12, "type takes one type name, found 2"},
		{"uid empty", "{ me(func: uid()) { uid } }", 1, 16, "uid needs at least one uid or variable"},
		{"quoted attribute", "{ me(func: eq(\"name\", \"x\")) { uid } }", 1, 15, "the attribute of eq must not be quoted: \"name\""},
		{"star language in function", "{ me(func: eq(name@*, \"x\")) { uid } }", 1, 20, "* cannot be used as a language inside functions"},
		{"count outside comparisons", "{ me(func: has(count(friend))) { uid } }", 1, 16, "count(...) can only be the first argument of eq, le, lt, ge, gt or between"},
		{"len outside conditions", "{ me(func: has(a)) @filter(eq(len(v), 1)) { uid } }", 1, 31, "len(v) is only allowed in an upsert's @if condition"},
		{"val in term function", "{ var(func: has(a)) { v as a } me(func: anyofterms(name, val(v))) { uid } }", 1, 41, "val(v) can only be an argument of eq, le, lt, ge, gt or between"},
		{"regexp without slashes", "{ me(func: regexp(name, \"abc\")) { uid } }", 1, 12, "regexp takes a regular expression /re/flags, found \"abc\""},
		{"regexp bad flag", "{ me(func: regexp(name, /abc/x)) { uid } }", 1, 12, "invalid regexp flag 'x' (only i is supported)"},
		{"regexp bad syntax", "{ me(func: regexp(name, /a(b/)) { uid } }", 1, 12, "bad regular expression: error parsing regexp: missing closing ): `a(b`"},
		{"regexp unterminated", "{ me(func: regexp(name, /abc)) { uid } }", 1, 25, "unterminated regular expression (no closing '/')"},
		{"regexp outside regexp", "{ me(func: eq(name, /abc/)) { uid } }", 1, 21, "a regular expression is only an argument of regexp"},
		{"match bad distance", "{ me(func: match(name, \"a\", x)) { uid } }", 1, 12, "the distance of match must be an integer, found \"x\""},
		{"match negative distance", "{ me(func: match(name, \"a\", -1)) { uid } }", 1, 12, "the distance of match must not be negative, found -1"},
		{"near bad distance", "{ me(func: near(loc, [1, 2], far)) { uid } }", 1, 12, "the distance of near must be a number of meters, found \"far\""},
		{"geo too deep", "{ me(func: within(loc, [[[[[1, 2]]]]])) { uid } }", 1, 28, "coordinates nested deeper than 4"},
		{"geo missing comma", "{ me(func: within(loc, [[1 2]])) { uid } }", 1, 28, "expected ',' or ']', found \"2\""},
		{"geo not a number", "{ me(func: near(loc, [a, 2], 1)) { uid } }", 1, 23, "expected a number, found \"a\""},
		{"list in term function", "{ me(func: allofterms(name, [\"a\"])) { uid } }", 1, 29, "allofterms takes no list"},
		{"similar_to bad k", "{ me(func: similar_to(v, 0, [1, 2])) { uid } }", 1, 12, "the count of similar_to must be a positive integer, found \"0\""},
		{"nested uid outside uid_in", "{ a as var(func: has(a)) me(func: eq(name, uid(a))) { uid } }", 1, 44, "only val(v) may be an argument of eq, found uid("},
		{"unbalanced filter", "{ me(func: has(a)) @filter(has(b) AND (has(c)) { uid } }", 1, 48, "expected AND, OR or ')' to close the filter, found '{'"},
		{"filter operator without operand", "{ me(func: has(a)) @filter(has(b) AND) { uid } }", 1, 38, "expected a function, found ')'"},
		{"filter bare word", "{ me(func: has(a)) @filter(name) { uid } }", 1, 28, "unknown function name"},
		{"two filters on a block", "{ me(func: has(a)) @filter(has(b)) @filter(has(c)) { uid } }", 1, 37, "@filter given twice (combine filters with AND, OR and parentheses)"},
		{"two filters on a field", "{ me(func: has(a)) { friend @filter(has(b)) @filter(has(c)) } }", 1, 46, "@filter given twice (combine filters with AND, OR and parentheses)"},
		{"unknown directive", "{ me(func: has(a)) @foo { uid } }", 1, 21, "unknown directive @foo"},
		{"facets on a block", "{ me(func: has(a)) @facets { uid } }", 1, 21, "@facets applies to predicates, not to a query block"},
		{"recurse on a field", "{ me(func: has(a)) { friend @recurse } }", 1, 30, "@recurse applies to query blocks only"},
		{"recurse bad depth", "{ me(func: has(a)) @recurse(depth: -1) { friend } }", 1, 36, "depth inside @recurse must be a non-negative integer, found \"-1\""},
		{"recurse bad loop", "{ me(func: has(a)) @recurse(loop: maybe) { friend } }", 1, 35, "loop inside @recurse must be true or false, found \"maybe\""},
		{"recurse unknown key", "{ me(func: has(a)) @recurse(width: 2) { friend } }", 1, 29, "unknown key width inside @recurse (depth, loop)"},
		{"recurse without predicates", "{ me(func: has(a)) @recurse }", 1, 3, "@recurse needs the predicates to follow inside braces"},
		{"cascade empty parens", "{ me(func: has(a)) @cascade() { uid } }", 1, 28, "@cascade() needs at least one predicate (or no parentheses)"},
		{"groupby empty", "{ me(func: has(a)) @groupby() { count(uid) } }", 1, 28, "@groupby needs at least one predicate"},
		{"groupby keyword alias", "{ me(func: has(a)) @groupby(first: age) { count(uid) } }", 1, 29, "cannot use keyword first as an alias in @groupby"},
		{"groupby with a predicate field", "{ me(func: has(a)) @groupby(age) { name } }", 1, 36, "only aggregates and count are allowed inside @groupby, found name"},
		{"groupby with val", "{ var(func: has(a)) { v as a } me(func: has(a)) @groupby(age) { val(v) } }", 1, 65, "only aggregates and count are allowed inside @groupby, found val"},
		{"empty block with a predicate", "{ me() { name } }", 1, 10, "a block without func only aggregates: use min/max/sum/avg(val(v)) or math(...), found name"},
		{"empty block with count", "{ me() { count(uid) } }", 1, 10, "a block without func only aggregates: count is not allowed"},
		{"math without var or alias", "{ var(func: has(a)) { v as a math(v + 1) } }", 1, 30, "math() must define a variable (v as math(...)) or have an alias"},
		{"math empty", "{ var(func: has(a)) { v as a m as math() } }", 1, 39, "math() needs an expression"},
		{"math unknown function", "{ var(func: has(a)) { v as a m as math(sin(v)) } }", 1, 40, "unknown math function sin"},
		{"math wrong arity", "{ var(func: has(a)) { v as a m as math(pow(v)) } }", 1, 40, "pow takes 2 arguments, found 1"},
		{"math division by zero", "{ var(func: has(a)) { v as a m as math(v / 0) } }", 1, 42, "division by zero"},
		{"math bad number", "{ var(func: has(a)) { v as a m as math(v + 1x) } }", 1, 44, "bad number \"1x\" in math"},
		{"math unbalanced", "{ var(func: has(a)) { v as a m as math((v + 1) } }", 1, 48, "expected ')' to close math(, found '}'"},
		{"val with a variable", "{ var(func: has(a)) { v as a w as val(v) } }", 1, 30, "cannot assign a variable to val()"},
		{"val two variables", "{ var(func: has(a)) { v as a w as b q: val(v, w) } }", 1, 40, "val() takes exactly one variable"},
		{"aggregate of a predicate", "{ me(func: has(a)) { min(age) } }", 1, 26, "min takes a value variable, min(val(v)), found \"age\""},
		{"expand with a variable", "{ me(func: has(a)) { v as expand(_all_) } }", 1, 22, "expand() cannot define a variable"},
		{"expand with an alias", "{ me(func: has(a)) { e: expand(_all_) } }", 1, 22, "expand() cannot have an alias"},
		{"expand forward", "{ me(func: has(a)) { expand(_forward_) } }", 1, 29, "expand(_forward_) is no longer supported; use expand(_all_) or a type"},
		{"expand all and types", "{ me(func: has(a)) { expand(_all_, Person) } }", 1, 22, "expand(_all_) cannot list types too"},
		{"expand with a non-type filter", "{ me(func: has(a)) { expand(_all_) @filter(has(b)) } }", 1, 44, "expand is only compatible with type filters, found has"},
		{"expand with arguments", "{ me(func: has(a)) { expand(_all_) (first: 1) } }", 1, 36, "expand() takes no arguments"},
		{"uid of a variable", "{ me(func: has(a)) { uid(v) } }", 1, 22, "uid(...) is not a field: use uid, or val(v) for a value variable"},
		{"count empty", "{ me(func: has(a)) { count() } }", 1, 28, "count() needs a predicate; count the nodes with count(uid)"},
		{"count with children", "{ me(func: has(a)) { count(friend) { name } } }", 1, 36, "count cannot take '{'"},
		{"directive after val", "{ var(func: has(a)) { v as a } me(func: uid(v)) { val(v) @filter(has(b)) } }", 1, 58, "val cannot take '@'"},
		{"children with languages", "{ me(func: has(a)) { name@en { uid } } }", 1, 30, "name@en cannot have sub-fields"},
		{"two aliases", "{ me(func: has(a)) { a: b: name } }", 1, 25, "a field can have one alias only"},
		{"two variables", "{ me(func: has(a)) { v as w as name } }", 1, 27, "a field can define one variable only"},
		{"languages twice", "{ me(func: has(a)) { name@en @fr } }", 1, 31, "languages given twice"},
		{"star with other languages", "{ me(func: has(a)) { name@en:* } }", 1, 32, "if * is used, no other languages are allowed in the list en:*"},
		{"dot not last", "{ me(func: has(a)) { name@.:en } }", 1, 32, "'.' (any language) must come last in the list .:en"},
		{"bad language", "{ me(func: has(a)) { name@e_n } }", 1, 27, "bad language tag \"e_n\""},
		{"arguments twice", "{ me(func: has(a)) { friend (first: 1) (offset: 1) } }", 1, 40, "arguments given twice: put them in one (...)"},
		{"unknown field argument", "{ me(func: has(a)) { friend (limit: 1) } }", 1, 30, "unknown argument \"limit\" of friend (first, offset, after, orderasc, orderdesc)"},
		{"empty field arguments", "{ me(func: has(a)) { friend () } }", 1, 30, "empty arguments ()"},
		{"facets twice", "{ me(func: has(a)) { friend @facets @facets(a) } }", 1, 44, "@facets given twice"},
		{"facet two aliases", "{ me(func: has(a)) { friend @facets(a: w, b: w) } }", 1, 46, "facet w has two aliases, a and b"},
		{"facet order twice", "{ me(func: has(a)) { friend @facets(orderasc: w, orderdesc: w) } }", 1, 61, "ordering by facet w given twice"},
		{"facet filter with a variable", "{ var(func: has(a)) { v as a } me(func: has(a)) { friend @facets(eq(val(v), 1)) } }", 1, 69, "val(...) cannot be used in a facet filter"},
		{"facet filter function", "{ me(func: has(a)) { friend @facets(has(w)) } }", 1, 37, "has cannot filter facets (eq, le, lt, ge, gt, allofterms, anyofterms)"},
		{"facet filter two values", "{ me(func: has(a)) { friend @facets(eq(w, 1, 2)) } }", 1, 37, "a facet filter function takes a facet name and one value"},
		{"variable used not defined", "{ me(func: uid(a)) { uid } }", 1, 12, "variable a is used but not defined"},
		{"variable defined not used", "{ me(func: has(a)) { v as name } }", 1, 22, "variable v is defined but not used"},
		{"variable defined twice", "{ a as var(func: has(a)) a as var(func: has(b)) me(func: uid(a)) { uid } }", 1, 26, "variable a is defined twice (also at line 1 col 3)"},
		{"facet variable unused", "{ me(func: has(a)) { friend @facets(w as weight) } }", 1, 22, "variable w is defined but not used"},
		{"math variable undefined", "{ var(func: has(a)) { m as math(x + 1) } q(func: uid(m)) { uid } }", 1, 33, "variable x is used but not defined"},
		{"cycle between blocks", "{ a as var(func: uid(b)) b as var(func: uid(a)) }", 1, 18, "blocks depend on each other's variables in a cycle: block var (line 1 col 3) uses b of block var (line 1 col 26), block var (line 1 col 26) uses a of block var (line 1 col 3)"},
		{"cycle of three", "{ a as var(func: uid(c)) { x } b as var(func: uid(a)) { y } c as var(func: uid(b)) { z } }", 1, 18, "blocks depend on each other's variables in a cycle: block var (line 1 col 3) uses c of block var (line 1 col 61), block var (line 1 col 61) uses b of block var (line 1 col 32), block var (line 1 col 32) uses a of block var (line 1 col 3)"},
		{"duplicate block names", "{ me(func: has(a)) { uid } me(func: has(b)) { uid } }", 1, 28, "block name me is used twice (also at line 1 col 3)"},
		{"alias clashes with a field", "{ me(func: has(a)) { name  name: age } }", 1, 28, "alias name conflicts with another field of this level (at line 1 col 22)"},
		{"two equal aliases", "{ me(func: has(a)) { x: name  x: age } }", 1, 31, "alias x conflicts with another field of this level (at line 1 col 22)"},
		{"bad variable name", "{ me(func: has(a)) { 1v as name } }", 1, 22, "bad variable name \"1v\" (it must start with a letter or '_')"},
		{"unterminated string", "{ me(func: eq(name, \"abc)) { uid } }", 1, 21, "unterminated string"},
		{"bad escape", "{ me(func: eq(name, \"a\\qb\")) { uid } }", 1, 21, "bad escape in string \"a\\qb\""},
		{"unexpected character", "{ me(func: eq(name, \"a\")) { uid } } ;", 1, 37, "unexpected character ';'"},
		{"bad unicode in name", "{ me(func: has(a)) { é } }", 1, 22, "unexpected character 'é'"},
		{"dollar without name", "{ me(func: has(a), first: $) { uid } }", 1, 27, "expected a variable name after '$'"},
		{"fragment undefined", "{ me(func: has(a)) { ...F } }", 1, 22, "fragment F is not defined"},
		{"fragment cycle", "{ me(func: has(a)) { ...F } } fragment F { ...G } fragment G { ...F }", 1, 40, "fragment F spreads itself (a cycle)"},
		{"fragment twice", "fragment F { a } fragment F { b }", 1, 27, "fragment F defined twice"},
		{"two dots", "{ me(func: has(a)) { ..F } }", 1, 22, "expected a field or ...fragment, found '.'"},
		{"fragment field under groupby", "{ q(func: has(a)) @groupby(age) { ...F } } fragment F { name }", 1, 57, "only aggregates and count are allowed inside @groupby, found pred"},
		{"fragment field in an aggregation block", "{ q() { ...F } } fragment F { name }", 1, 31, "a block without func only aggregates: found pred"},
		{"escape to invalid UTF-8", `{ me(func: eq(name, "a\xffb")) { uid } }`, 1, 21, "not valid UTF-8 once unescaped"},
		{"error on a later line", "{\n  me(func: has(a)) {\n    name\n    friend @filter(eq(name, \"x\") AND) {\n      uid\n    }\n  }\n}", 4, 37, "expected a function, found ')'"},
		{"column counts characters", "{ me(func: eq(name, \"héllo\"), first: x) { uid } }", 1, 38, "first must be an integer"},
		{"invalid UTF-8", "{ me(func: eq(name, \"a\xffb\")) { uid } }", 1, 23, "invalid UTF-8"},
		{"invalid UTF-8 on line 2", "{\n  é\xff }", 2, 4, "invalid UTF-8"},
	} {
		_, err := Parse(c.text)
		checkErr(t, c, err)
	}
}

// TestLimits: nesting beyond DepthMax and text beyond TextLenMax are
// errors, not crashes.
func TestLimits(t *testing.T) {
	deep := "{ q(func: has(a)) " + strings.Repeat("{ a ", DepthMax+1) + strings.Repeat("}", DepthMax+2) + " }"
	_, err := Parse(deep)
	checkErr(t, errCase{"deep fields", deep, 1, 1 + len("{ q(func: has(a)) ") + 2 + 4*DepthMax, "nesting deeper than 256"}, err)
	deepFilter := "{ q(func: has(a)) @filter(" + strings.Repeat("(", DepthMax+1) + "has(a)" + strings.Repeat(")", DepthMax+1) + ") { uid } }"
	if _, err := Parse(deepFilter); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Errorf("deep filter: %v", err)
	}
	deepNot := "{ q(func: has(a)) @filter(" + strings.Repeat("NOT ", DepthMax+1) + "has(a)) { uid } }"
	if _, err := Parse(deepNot); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Errorf("deep NOT: %v", err)
	}
	deepMath := "{ var(func: has(a)) { v as a m as math(" + strings.Repeat("-(", DepthMax) + "v" + strings.Repeat(")", DepthMax) + ") } q(func: uid(m)) { uid } }"
	if _, err := Parse(deepMath); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Errorf("deep math: %v", err)
	}
	// Fragments that double at each level stop at FragmentFieldsMax.
	var b strings.Builder
	b.WriteString("{ q(func: has(a)) { ...F0 } }\n")
	for i := range 20 {
		b.WriteString("fragment F" + strconv.Itoa(i) + " { ...F" + strconv.Itoa(i+1) + " ...F" + strconv.Itoa(i+1) + " }\n")
	}
	b.WriteString("fragment F20 { a }")
	if _, err := Parse(b.String()); err == nil || !strings.Contains(err.Error(), "fragments expand to more than") {
		t.Errorf("fragment blow-up: %v", err)
	}
	long := "{ q(func: has(a)) { " + strings.Repeat("a ", TextLenMax/2) + "} }"
	_, err = Parse(long)
	if e, ok := err.(*Error); !ok || e.Line != 0 || !strings.Contains(e.Msg, "longer than") {
		t.Errorf("long text: %v", err)
	}
}
