// Package apicode is the one table of the native API's stable error codes:
// each Code's HTTP status, gRPC code, wire code (weftpb.ErrorCode) and
// whether retrying may succeed. The server (internal/api) answers with it
// and the Go client (client/weft) reads answers with it, so the two cannot
// disagree; docs/api.md §5 repeats it for people, and a test checks that
// it lists every code.
//
// Codes are never renamed or reused. Every code but the HTTP-only
// METHOD_NOT_ALLOWED is spelled as its weftpb.ErrorCode. The package holds
// no state besides the table and is safe for concurrent use.
package apicode
