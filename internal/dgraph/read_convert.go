package dgraph

import (
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/value"
)

// ConvertValue converts v to scalar type to with Dgraph's rules (the ones
// mutations use), for comparing a query's literal with stored values.
func ConvertValue(v value.Value, to schema.Scalar) (value.Value, error) { return convertValue(v, to) }
