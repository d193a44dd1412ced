// Package api serves Dgraph's client API on a Weft engine, so that
// Dgraph's own clients (pydgraph, dgo, curl scripts) work unchanged: the
// gRPC service api.Dgraph (Login, Query, Alter, CommitOrAbort,
// CheckVersion, RunDQL, AllocateIDs, CreateNamespace, DropNamespace,
// ListNamespaces; the snapshot-streaming RPCs answer UNIMPLEMENTED) and the
// HTTP endpoints /query, /mutate, /commit, /alter, /login, /admin (only
// the addNamespace and deleteNamespace mutations) and /health, with
// Dgraph's request and response shapes and error wording (docs/dgraph.md). Data goes through package
// dgraph (the model), queries through an Executor (package exec).
//
// # Transactions
//
// A Dgraph transaction is a Weft snapshot taken at its first request, the
// reads its queries make there (recorded through a dgraph.SnapshotReader), and its
// mutations, buffered: each mutate request evaluates all of the
// transaction's mutations at the snapshot (dgraph.Graph.Prepare) to check
// them and give its blank nodes UIDs, and keeps them with those blank
// nodes replaced by their UIDs (blank nodes are scoped to one request, as
// in Dgraph). CommitOrAbort (or commit_now) commits the prepared writes
// with every read the queries and mutations made: the engine validates
// each one, so the transaction commits only if nothing it read changed —
// serializable, not just snapshot isolation (write skew aborts). A commit
// that fails without a conflict on the queries' reads (a concurrent
// transaction created an index vertex this one creates too, or changed a
// node this one only writes) re-evaluates the mutations at a fresh
// snapshot and tries again; a query read that changed aborts. Aborts
// answer gRPC ABORTED with Dgraph's "Transaction has been aborted. Please
// retry", which pydgraph raises as AbortedError.
//
// A request with start_ts 0 and commit_now is a whole transaction: it runs
// at a fresh snapshot and is retried from the start on conflicts
// (Config.AttemptsMax). Other requests are never retried by the server.
//
// A query in a transaction sees its own buffered mutations, as in Dgraph:
// it reads through an overlay (overlay.go) replaying the prepared engine
// operations over each vertex read at the snapshot; the underlying reads
// are recorded and validated like any other. Blank-node UIDs are fixed
// when the mutation is sent, so later requests can name those nodes.
//
// start_ts values are server-side ids of a bounded table (Config.TxnsMax)
// mapping them to transactions; a transaction idle for Config.TxnIdle is
// forgotten, and a full table drops the least recently used transaction
// without buffered mutations (read-only ones, which pydgraph never ends),
// then answers "429 Too Many Requests". A forgotten transaction's next
// request aborts. keys in TxnContext are the UIDs changed, preds "0-<pred>";
// clients only echo them, the server keeps its own state.
//
// # Access control
//
// Off unless Config.ACL.Secret is set. Then Login checks a user's password
// (PBKDF2 hashes in reserved vertices, not reachable by DQL) and issues an
// access JWT (HS256, claims userid, groups, namespace 0, exp) and a refresh
// JWT; every other call needs the access JWT (gRPC metadata "accessjwt",
// HTTP header X-Dgraph-AccessToken). Expired tokens answer "Token is
// expired" (pydgraph then logs in with its refresh token). User "groot"
// in group "guardians" is created on first start; guardians may do
// everything, other users may query and mutate but not alter or allocate
// IDs (Dgraph's per-predicate rules are not implemented). A transaction
// belongs to the user that began it; its TxnContext.hash (an HMAC of
// start_ts, namespace and user) must be echoed. With ACL off, Login
// accepts anyone (pydgraph's set-up logs in first), tokens are ignored and
// everything is namespace 0.
//
// # Namespaces
//
// Dgraph's multi-tenancy, with ACL on (namespace.go): a request acts in
// its access token's namespace (claim "namespace", from Login's
// namespace), through that namespace's dgraph.Graph over
// dgraph.NamespaceView, so its predicates, schema, types, indexes, XIDs and
// upserts are its own; UIDs are one space. Each namespace has its own
// users and guardians (groot, created with the namespace). Guardians of
// namespace 0 (the galaxy) create namespaces (ids from a transactional
// counter, never reused) and delete them (/admin or the gRPC RPCs);
// namespace 0 cannot be deleted. A deleted namespace refuses logins and
// requests ("namespace 0x2 was deleted"), and every transaction of a
// namespace n > 0 has n's registry vertex in its read set, so it cannot
// commit across the deletion. drop_all drops the caller's namespace's data
// and schema; the galaxy's drop_all drops every namespace's, as Dgraph's
// DROP_ALL does (the namespaces and their users stay).
//
// # Concurrency
//
// A Server is safe for concurrent use. Requests of one transaction are
// serialized by its lock; the table of transactions has its own lock,
// never held while the engine is called.
package api
