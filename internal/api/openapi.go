package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 description of the HTTP API, served at
// /openapi.yaml. docs/openapi.yaml is a copy (a test keeps them identical).
//
//go:embed openapi.yaml
var OpenAPI []byte
