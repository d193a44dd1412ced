package main

import (
	"github.com/spf13/pflag"

	"github.com/weft-db/weft/internal/roles"
)

// registerDgraphFlags registers weft serve's (and weft gatekeeper's) flags
// for Dgraph's API (docs/dgraph.md) into d.
func registerDgraphFlags(f *pflag.FlagSet, d *roles.DgraphConfig) {
	def := roles.DefaultDgraphConfig()
	f.StringVar(&d.HTTPAddr, "dgraph-http", "", `Dgraph's HTTP API (/query, /mutate, /commit, /alter, /login, /admin, /health) on this address, e.g. 127.0.0.1:8080 ("": off)`)
	f.StringVar(&d.GRPCAddr, "dgraph-grpc", "", `Dgraph's gRPC API (api.Dgraph, for pydgraph and dgo) on this address, e.g. 127.0.0.1:9080 ("": off)`)
	f.StringVar(&d.SecretFile, "acl-secret-file", "", "turns on access control for Dgraph's API: file holding the JWT signing secret (at least 32 bytes)")
	f.StringVar(&d.GrootPasswordFile, "acl-groot-password-file", "", `file holding the password the "groot" user gets when first created (default "password", as in Dgraph)`)
	f.DurationVar(&d.AccessTTL, "acl-access-ttl", def.AccessTTL, "lifetime of an access JWT")
	f.DurationVar(&d.RefreshTTL, "acl-refresh-ttl", def.RefreshTTL, "lifetime of a refresh JWT")
	f.IntVar(&d.TxnsMax, "dgraph-txns-max", def.TxnsMax, "open Dgraph transactions remembered at once")
	f.DurationVar(&d.TxnIdle, "dgraph-txn-idle", def.TxnIdle, "a Dgraph transaction unused this long is forgotten (aborted)")
	f.StringVar(&d.Placement, "dgraph-placement", "", `where Dgraph's data lives, chosen when it is first created: "vertex" (a node's data on its vertex) or "predicate" (each predicate's data on one shard); "" opens existing data in its own and creates new data with "vertex"; a placement other than the data's is refused`)
}
