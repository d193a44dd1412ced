// Package apitest provides Fake, an in-memory engine.API for testing the
// front ends and clients without the real engine.
//
// Fake keeps only the latest state (every snapshot reads it) but validates
// read sets exactly like the engine's contract says: a Read's version is the
// stamp of the vertex's (or alias's) last write, and Commit aborts when any
// read vertex changed since. That is enough for optimistic transactions run
// through it to be serializable, so client retry loops can be checked against
// it. Errors can be injected per method. A Fake is safe for concurrent use.
package apitest
