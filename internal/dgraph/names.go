package dgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/txn"
)

// The model: how Dgraph names map to Weft handles, edge handles, aliases and
// property keys. doc.go explains the layout; these functions are its only
// implementation. '|' never occurs in a predicate name (IRIs exclude it, and
// checkPred rejects it after \u escapes), nor in a facet key (checkFacetKey),
// so it separates the parts of every composite name unambiguously; '@' only
// separates a predicate from its language.

// Reserved names.
const (
	// reservedPrefix starts every vertex handle the mapping keeps for itself.
	reservedPrefix = "_dg|"
	// SchemaVertex holds the schema text and the index metadata.
	SchemaVertex = reservedPrefix + "schema"
	// LeaseVertex holds the next unleased UID.
	LeaseVertex = reservedPrefix + "uids"
	// xidAliasPrefix starts the alias that maps an XID to its node.
	xidAliasPrefix = "xid|"
	// EdgePredKey is the edge property naming an edge's predicate ("p", or
	// "~p" on a reverse edge). Facet keys cannot contain '|', so it never
	// collides with a facet.
	EdgePredKey = "|pred"
	// countPrefix starts the property counting a node's edges of one
	// predicate: "|count|p", and "|count|~p" for reverse edges.
	countPrefix = "|count|"
	// XIDPred is the predicate that records a node's XID (as Dgraph's
	// --store_xids / live loader -U xid do).
	XIDPred = "xid"
)

// Limits on names (bytes). Handles and keys built from them stay within
// txn.HandleLenMax and txn.KeyLenMax.
const (
	PredLenMax     = 150
	LangLenMax     = 32
	FacetKeyLenMax = 64
	// XIDLenMax bounds an XID kept verbatim in its alias; longer XIDs are
	// hashed there (the xid predicate keeps them whole).
	XIDLenMax = txn.HandleLenMax - len(xidAliasPrefix)
)

// Index and has-set vertices are spread over Buckets vertices per token by
// the UID's block (uid >> BucketShift): parallel loaders hold leases in
// different blocks, so their writes to a common token land on different
// vertices and do not conflict. Lookups read every bucket. Part of the
// stored layout: changing either needs a re-index.
const (
	Buckets     = 16
	BucketShift = 14
)

// bucket is the bucket of uid.
func bucket(uid uint64) int { return int(uid>>BucketShift) % Buckets }

// FormatUID renders a UID the way Dgraph does ("0x1f"): it is also the
// node's vertex handle.
func FormatUID(uid uint64) string { return "0x" + strconv.FormatUint(uid, 16) }

// ParseUID reads a UID in Dgraph's forms: 0x1f, or decimal 31. Zero is not
// a UID.
func ParseUID(s string) (uint64, error) {
	u, err := strconv.ParseUint(s, 0, 64)
	if err != nil || u == 0 {
		return 0, fmt.Errorf("%w: %q is not a uid", ErrInvalid, s)
	}
	return u, nil
}

// UIDOfHandle reads a node's handle back: ok only for the canonical form
// FormatUID produces (lower-case hex, no leading zeros).
func UIDOfHandle(h string) (uint64, bool) {
	if len(h) < 3 || len(h) > 18 || h[0] != '0' || h[1] != 'x' || h[2] == '0' {
		return 0, false
	}
	u, err := strconv.ParseUint(h[2:], 16, 64)
	if err != nil || FormatUID(u) != h {
		return 0, false
	}
	return u, true
}

// ValueKey is the vertex property holding predicate pred's value in
// language lang ("" for none): "name", "name@en".
func ValueKey(pred, lang string) string {
	if lang == "" {
		return pred
	}
	return pred + "@" + lang
}

// FacetPropKey is the vertex property holding facet f of a scalar value.
func FacetPropKey(valueKey, facet string) string { return valueKey + "|" + facet }

// CountKey is the vertex property counting the node's edges of pred
// ("~p" for reverse edges).
func CountKey(pred string) string { return countPrefix + pred }

// EdgeHandle is the handle of the edge for pred (or "~p") to dst. It is
// deterministic, so setting an edge twice finds it and deleting it needs no
// scan.
func EdgeHandle(pred string, dst uint64) string { return pred + "|" + FormatUID(dst) }

// ParseEdgeHandle splits an edge handle into predicate and destination.
func ParseEdgeHandle(h string) (pred string, dst uint64, ok bool) {
	i := strings.LastIndexByte(h, '|')
	if i <= 0 {
		return "", 0, false
	}
	dst, ok = UIDOfHandle(h[i+1:])
	return h[:i], dst, ok
}

// bucketKey is the node property recording the bucket of its has-set and
// index entries for pred when it is not its UID's (entryBucket).
func bucketKey(pred string) string { return "|bucket|" + pred }

// ReverseName is the name of pred's reverse edges.
func ReverseName(pred string) string { return "~" + pred }

// propKind says what a vertex property key holds.
type propKind uint8

const (
	propValue propKind = iota // "p" or "p@lang"
	propFacet                 // "p|facet" or "p@lang|facet"
	propCount                 // "|count|p"
	propOther                 // another "|..." key
)

// classifyProp splits a property key: the predicate and language of a value
// or of a facet's value, the facet's name, the counted predicate.
func classifyProp(k string) (kind propKind, pred, lang, facet string) {
	if strings.HasPrefix(k, countPrefix) {
		return propCount, k[len(countPrefix):], "", ""
	}
	if strings.HasPrefix(k, "|") {
		return propOther, "", "", ""
	}
	kind = propValue
	if i := strings.IndexByte(k, '|'); i >= 0 {
		kind, facet, k = propFacet, k[i+1:], k[:i]
	}
	if i := strings.IndexByte(k, '@'); i >= 0 {
		return kind, k[:i], k[i+1:], facet
	}
	return kind, k, "", facet
}

// xidAlias is the alias naming the node of an XID.
func xidAlias(xid string) string {
	if len(xid) <= XIDLenMax && strings.IndexByte(xid, 0) < 0 && utf8.ValidString(xid) {
		return xidAliasPrefix + xid
	}
	sum := sha256.Sum256([]byte(xid))
	return xidAliasPrefix + "#" + hex.EncodeToString(sum[:])
}

// hasVertex is the has-set vertex of pred for bucket b: its edges (handle =
// the node's UID) name the nodes with at least one value or edge of pred.
func hasVertex(pred string, b int) string {
	return reservedPrefix + "h|" + pred + "|" + strconv.FormatInt(int64(b), 16)
}

// indexVertex is the vertex of one token of one index (generation gen,
// tokenizer tok) over value key key, for bucket b: its edges (handle = the
// node's UID) name the nodes whose value has the token.
func indexVertex(gen uint64, tok, key string, b int, token string) string {
	return reservedPrefix + "i|" + strconv.FormatUint(gen, 10) + "|" + tok + "|" + key + "|" +
		strconv.FormatInt(int64(b), 16) + "|" + index.TokenName(token)
}

// dirVertex is bucket b of an index generation's directory: one edge per
// token vertex of that bucket (handle dirEdge), so that range lookups can
// list the tokens and dropping the index can find its vertices.
func dirVertex(gen uint64, b int) string {
	return reservedPrefix + "d|" + strconv.FormatUint(gen, 10) + "|" + strconv.FormatInt(int64(b), 16)
}

// dirVertexIn is dirVertex in a placement: in the predicate placement the
// name ends with "|<pred>", the indexed predicate, so that placedInternal
// puts the directory in the predicate's group with its token vertices.
func dirVertexIn(placement, pred string, gen uint64, b int) string {
	if placement == PlacementPredicate {
		return dirVertex(gen, b) + "|" + pred
	}
	return dirVertex(gen, b)
}

// dirEdge is the directory edge of a token vertex: value key and token.
func dirEdge(key, token string) string { return key + "|" + index.TokenName(token) }

// checkPred checks a predicate name from a mutation: what the RDF parser
// already guarantees for IRIs, plus the characters the layout reserves.
func checkPred(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty predicate", ErrInvalid)
	case len(p) > PredLenMax:
		return fmt.Errorf("%w: predicate %.40q… is longer than %d bytes", ErrInvalid, p, PredLenMax)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: predicate %q is not valid UTF-8", ErrInvalid, p)
	case strings.ContainsAny(p, "|@\x00"):
		return fmt.Errorf("%w: predicate %q contains '|', '@' or NUL", ErrInvalid, p)
	case p[0] == '~':
		return fmt.Errorf("%w: predicate %q starts with '~' (reverse edges come from @reverse)", ErrInvalid, p)
	case p == "uid" || p == "*":
		return fmt.Errorf("%w: predicate %q is reserved", ErrInvalid, p)
	}
	return nil
}

func checkLang(l string) error {
	if len(l) > LangLenMax || strings.ContainsAny(l, "|@\x00") {
		return fmt.Errorf("%w: language %q", ErrInvalid, l)
	}
	return nil
}

func checkFacetKey(k string) error {
	if k == "" || len(k) > FacetKeyLenMax || strings.ContainsAny(k, "|\x00") || !utf8.ValidString(k) {
		return fmt.Errorf("%w: facet key %q (non-empty, no '|', at most %d bytes)", ErrInvalid, k, FacetKeyLenMax)
	}
	return nil
}
