package main

import "github.com/tierflow/tierflow/realrun/gnn"

// micro sets the run's micro-batches per batch.
func micro(o *gnn.Options, k int) error {
	o.MicroBatches = k
	return nil
}
