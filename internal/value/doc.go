// Package value holds Weft's typed property values: string, int, float, bool,
// datetime and lists of values. Values are immutable plain data, safe to share
// between goroutines once built. Encode/Decode give a compact, canonical binary
// form (the store's and the wire's); the JSON form is what the HTTP API and the
// Python client see.
package value
