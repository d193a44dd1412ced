// Package doctest runs the examples of Weft's documentation: the fenced
// code blocks of a Markdown file that are marked runnable are extracted in
// order, run, and their output compared with the expected output written
// under them, so a doc cannot go stale without a test failing.
//
// # Marker
//
// A block is runnable when its info string is its language followed by the
// word doctest; GitHub renders it as an ordinary sh or python block:
//
//	```sh doctest
//	weft run get_node '{"node": "person/alice", "edges": false}'
//	```
//
//	```output
//	{
//	  "handle": "person/alice",
//	  ...
//	}
//	```
//
// Languages: sh (run by bash -euo pipefail, with weft on PATH) and python
// (run by the Python client's interpreter). Other blocks are never run.
//
// # Expected output
//
// An ```output block right after a runnable block (only blank lines
// between) is its expected standard output; a runnable block without one
// must only succeed (exit 0). The match is line by line, exact but for
// trailing spaces, with two wildcards for what changes from run to run
// (snapshot tokens, timestamps, ports, floats in the last digits):
//
//   - {{…}} inside a line, with any name between the braces ({{snapshot}},
//     {{any}}), matches any run of characters within that line;
//   - a line that is exactly ... matches zero or more whole lines.
//
// # State
//
// The blocks of one file run in order against one server; sh blocks share
// shell variables (each block sees the variables the earlier ones set, so a
// later step can use a snapshot an earlier one printed). Python blocks are
// each a whole program. The addresses of the server are in the environment:
// WEFT_HTTP (host:port of the HTTP API) and WEFT_GRPC (of gRPC); WEFT_KRONOS
// is a free address for a block that starts `weft kronos` itself, and
// WEFT_KV_PEERS three (comma-separated) for a ring of `weft kv serve`. A process
// a block starts in the background lives until the file's last block ran;
// then its process group is killed.
//
// # Server
//
// Each file gets a fresh `weft serve --demo --in-memory` on free loopback
// ports. A line <!-- doctest serve: FLAGS --> (invisible on GitHub) adds
// flags for that file's server; $WEFT_DGRAPH_HTTP and $WEFT_DGRAPH_GRPC in
// them are free addresses, as the blocks see them too.
//
// RunFile and RunBlocks are safe for concurrent use with different Envs
// (each Env's Dir holds its file's shell state).
package doctest
