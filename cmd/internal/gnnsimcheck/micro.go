package main

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn"
)

// micro sets the run's micro-batches per batch.
func micro(o *gnn.Options, k int) error {
	if k > 1 {
		return fmt.Errorf("%d: this trainer trains batches whole", k)
	}
	return nil
}
