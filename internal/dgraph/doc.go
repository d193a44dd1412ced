// Package dgraph maps Dgraph's data model onto Weft's engine API: nodes
// with UIDs, predicates, language tags, facets, reverse edges, counts,
// indexes and a DQL schema, all kept in ordinary vertices, edges,
// properties and aliases, and written by ordinary engine transactions (one
// per mutation, retried on conflicts). It is the layer under the DQL
// executor: mutations (RDF quads or Dgraph JSON), schema alters, the
// lookups the executor needs (Eq, Range, Lookup, Has, ReadNode), UID
// leasing and the bulk loader behind `weft load`. It executes no queries.
//
// It is the root of the Dgraph wing, whose sub-packages are: schema (the
// DQL schema language), dql (the DQL parser), index (the tokenizers),
// exec (the DQL executor) and api (Dgraph's HTTP and gRPC APIs). The wing
// programs against the engine's contract, package engineapi, never against
// the engine itself (imports_test.go checks it); every query reads through
// one Reader (reader.go). The loaders stay here: they write the stored
// layout of this package directly.
//
// # The model
//
//	Dgraph                         Weft
//	node 0x1f                      vertex with handle "0x1f" (FormatUID: lower-case hex, no leading zeros)
//	<s> <p> "v" .                  vertex property "p" of s
//	<s> <p> "v"@en .               vertex property "p@en"
//	[string] list predicate        one property holding a value.List
//	facet f on a scalar            vertex property "p|f" (or "p@en|f")
//	<s> <p> <o> .  (uid)           edge of s, handle "p|0x<o>" (EdgeHandle), to o; edge
//	                               property "|pred" = "p"; facets are the edge's other properties
//	@reverse                       edge of o, handle "~p|0x<s>", to s, "|pred" = "~p" (no facets)
//	edge count of p                vertex property "|count|p" (always, for every uid predicate)
//	@count with @reverse           vertex property "|count|~p" on the object
//	dgraph.type                    the [string] predicate "dgraph.type" (exact index, as in Dgraph)
//	XID <m.0abc>                   alias "xid|m.0abc" (hashed when long) of the node, and its
//	                               "xid" predicate (Dgraph's --store_xids)
//
// '|' cannot occur in a predicate (IRIs exclude it; checkPred rejects it
// after escapes) nor in a facet key, so it separates composite names, and
// property keys starting with '|' are the mapping's own. An edge handle is
// deterministic, so setting an edge twice finds it and a deletion needs no
// scan. Values are converted to the predicate's schema type with Dgraph's
// rules (convert.go); a predicate the schema lacks is added with the type
// of its first value, as Dgraph's flexible schema does. Passwords are
// stored as PBKDF2-SHA256 hashes (CheckPassword). Deleting `<s> * *`
// removes every value and out-edge of s except its xid: nodes are never
// deleted, so an XID keeps its UID and a UID stays a node.
//
// # Placement
//
// Config.Placement, fixed when the store is created (meta "placement"),
// says where a node's data lives. PlacementVertex (the default, and all
// data written before placements existed) is the model above: everything
// of node 0x1f on vertex "0x1f", so a node is on one shard. With
// PlacementPredicate, as in Dgraph, a predicate's data is on one shard:
//
//	node 0x1f                      vertex "0x1f": its xid alias and one property "|pl|p" per
//	                               predicate p it has a placed vertex for (never removed)
//	values, facets, "|count|p",    vertex "_pl|p|0x1f" (PlacedVertex), same keys and edge handles as
//	"|bucket|p", out-edges of p,   above; created with its "|pl|p" entry on first use, never
//	reverse edges ~p and their     deleted (an emptied one reads as nothing)
//	count
//	has-set and index token        "_pl|p|" + their vertex-placement name
//	vertices of p
//
// "_pl|p|..." names form placement group p (txn.GroupOf): the engine puts
// them all on the shard of "_pl|p". An index directory's name ends with
// "|p" ("_dg|d|<gen>|<b>|p", dirVertexIn) and is in group p too. The
// mapping itself is
// unchanged: placedAPI (placement.go) shows it the engine as the vertex
// placement stores it — a node read is the node vertex, then its placed
// vertices in one batched read, merged; a commit routes every operation to
// the vertex holding its key or edge, creates placed vertices on first
// use, and unpacks node reads into their parts (Prepare does the same at
// its snapshot, so prepared transactions carry engine operations and
// reads) — so mutations, deletions, reverse edges, counts, upserts,
// alters, lookups and expand(_all_) answer alike in both placements. The
// DQL executor reads a level per predicate instead (package exec).
// Index lookups read a token's 16 bucket vertices in one batched read
// (engineapi.GetVertices): one request in the predicate placement, one per
// shard involved in the vertex placement. Moving a predicate's group
// between shards online is not implemented.
//
// # Namespaces
//
// Dgraph's namespaces are a renaming of what this mapping reads and writes
// (namespace.go): a Graph opened over NamespaceView(db, n) (Graph.Namespace)
// sees only namespace n, and the mapping above does not know about them.
// Namespace 0 keeps the names above exactly (its view only hides other
// namespaces' keys on shared nodes); namespace n > 0 uses "_ns|<n>|..." for
// reserved vertices and XID aliases, "_pl|@<n>@<group>|..." for placement
// groups, and prefixes the keys and edge handles of node vertices (shared by
// every namespace, as UIDs are) with "@<n>|".
//
// # Reserved vertices (handles starting "_dg|")
//
//	_dg|schema                       properties "text" (canonical schema) and "meta" (JSON: layout
//	                                 version, index generations, pending alter work)
//	_dg|uids                         property "next": the first UID never leased
//	_dg|h|<pred>|<b>                 has-set: an edge (handle = UID) to each node with a value or
//	                                 edge of pred, for bucket b (Has)
//	_dg|i|<gen>|<tok>|<key>|<b>|<t>  index: an edge (handle = UID) to each node whose value key
//	                                 (pred or pred@lang) has token t, for bucket b
//	_dg|d|<gen>|<b>                  directory of an index generation: an edge "<key>|<t>" to each
//	                                 of its token vertices in bucket b (Range, and dropping)
//
// A token too long for a handle (over 160 bytes, or with a NUL) appears as
// a prefix, '#' and 128 bits of its SHA-256. An index's vertices carry the
// generation assigned when it was created, so a dropped index's leftovers
// never mix with a later one of the same name. Index and has-set vertices
// are created on first use and kept when empty (a process-wide cache
// remembers which exist); only dropping the index deletes them.
//
// Buckets. Every index token and has-set is spread over Buckets (16)
// vertices by a node's bucket: (uid >> 14) % 16, the block of 16384 UIDs
// it was leased in, unless the node records another for the predicate
// ("|bucket|p") — taken from the writer's lease when the node had no entry
// for p. Parallel loaders hold leases in different blocks, so their writes
// to a common token ("the") or to a has-set land on different vertices and
// do not conflict. The price is on reads: a lookup reads all 16 bucket
// vertices of a token.
//
// Costs. Eq, Lookup and Has read 16 vertices (and, for lossy tokens —
// hash, year/month/day/hour — the candidates' values). Range reads the 16
// directory vertices, i.e. every distinct token of the index, then the
// token vertices inside the range, and checks the values of the boundary
// tokens of a lossy index: O(distinct values + results). A mutation writes,
// per quad: the value or edge (+1 for the edge's "|pred"), the count, one
// entry per new index token, a has-set entry for a node's first value of a
// predicate, and for a new token its vertex and directory entry — about 7
// engine operations per quad on the film data.
//
// Tokenizers (which index kinds are maintained, and how fulltext and
// trigram tokens are made) are package index's; the lookups above are
// this package's. A schema may name tokenizers package index does not
// maintain; lookups on them answer ErrNoIndex.
//
// # Transactions and why they are correct
//
// A mutation reads, at one snapshot, the schema vertex and every node it
// changes (properties and out-edges; a node's version covers both), and
// commits its writes with those reads (optimistic concurrency): it commits
// only if none of them changed, so its view of the old values — from which
// it derives index, has-set, count and reverse-edge changes — was right.
// The schema vertex in every read set makes each mutation commit under the
// schema (and index generations) it was checked against. Index, has-set and
// directory vertices are written without being read into the read set: the
// entries of a node change only in transactions that also change the node,
// so they are consistent with it; a token vertex created concurrently by
// two transactions makes one fail (already exists), and it retries. XID
// aliases are unique names: two transactions binding one XID cannot both
// commit. Conflicts are retried with backoff (Config.AttemptsMax).
// Prepare and Commit (txn.go) evaluate a batch of mutations at a given
// snapshot without committing and commit it later with extra reads, for
// Dgraph transactions that span requests (internal/dgraph/api). Reader
// (reader.go) is the wing's one read path at a snapshot: SnapshotReader
// implements it over an engine and records the read set, ReadVertices
// reads a batch through any Reader; Reads (read_reader.go) routes the
// lookups through a Reader, so a query's index and schema reads join the
// transaction's read set.
//
// UIDs are leased: a lease is one transaction advancing "next" by
// Config.LeaseSize, so leases never overlap, whatever process takes them;
// the UIDs of a lease are handed out locally. A crash wastes at most the
// rest of each allocator's lease. Explicit uids beyond the leased range are
// refused, as in Dgraph.
//
// Alter commits the new schema with the bookkeeping of the work it implies
// (index, reverse-edge and count builds and drops over existing values,
// value conversion), then does the work in batches of transactions;
// DropPredicate deletes a predicate's data through ordinary deletions, then
// its definition. While a predicate has pending work, its mutations and
// lookups fail with ErrBusy; Open resumes interrupted work (every step is
// idempotent).
//
// @upsert and @unique are kept in the schema but not enforced here: an
// upsert block's query reads index vertices through Eq at the mutation's
// snapshot, and putting those reads into the mutation's read set (an
// executor's job, with an Eq variant that returns them) makes concurrent
// upserts of one key conflict under optimistic concurrency.
//
// # Limits
//
// Predicates ≤ 150 bytes, languages ≤ 32, facet keys ≤ 64; one mutation
// fits one engine transaction (txn.OpsMax operations, txn.ReadsMax reads:
// the loader halves a batch that does not fit); a node read whole (a
// wildcard delete) has at most Config.EdgesMax out-edges; facets on the
// values of list predicates, bigfloat values, uid()/val() variables (upsert
// blocks) are not supported; has(~p) has no has-set; DropAll is not
// implemented; a type change converts at most ConvertNodesMax nodes.
//
// # Concurrency
//
// A Graph is safe for concurrent use, and any number of Graphs in any
// processes may share an engine. Mutations and loads are serializable
// transactions; lookups read at the snapshot they are given.
package dgraph
