#!/usr/bin/env bash
# Regenerates the committed generated files: the protobuf code (Go and Python)
# and docs/programs-reference.md (from the node program registry).
# Needs Debian's protobuf-compiler and the Go plugins; installs them if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler
fi
export PATH="$PATH:$(go env GOPATH)/bin"
command -v protoc-gen-go >/dev/null || go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
command -v protoc-gen-go-grpc >/dev/null || go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
for dir in internal/wire/*pb; do
  (cd "$dir" && protoc -I. --go_out=paths=source_relative:. --go-grpc_out=paths=source_relative:. ./*.proto)
done
if [ -x clients/python/scripts/gen_proto.sh ]; then clients/python/scripts/gen_proto.sh; fi
go run ./internal/doctest/progref
