// Package api is Weft's network front end: a gRPC service (weft.v1.Weft,
// internal/wire/weftpb) and an HTTP/JSON API (docs/api.md, openapi.yaml) over
// one engine.API, with Prometheus metrics and the demo graph loader.
//
// Both faces are thin adapters: they decode and check a request's shape
// (unknown fields, malformed JSON, fields an operation does not use, limits),
// call the engine, and encode the answer. A request that fails these checks
// never reaches the engine, so bad input changes nothing. Every error leaves
// as one stable code (internal/wire/apicode; errors.go classifies), which
// each face maps to its own status (gRPC code + Error detail; HTTP status +
// {"error": {...}} body).
//
// Server values and handlers are safe for concurrent use; they hold no state
// of their own besides metrics.
package api
