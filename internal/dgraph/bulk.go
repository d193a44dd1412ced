package dgraph

// BulkGraphConfig is the Graph configuration for a load into a bulk store
// (internal/bulk, weft load --bulk): DefaultConfig with the mutation's reads
// made one after the other, since a bulk store answers them from memory
// under one lock and parallel readers would only queue on it.
func BulkGraphConfig() Config {
	c := DefaultConfig()
	c.ReadsParallelMax = 1
	return c
}
