package model

// Axpy computes y += a·x over len(x) (len(y) ≥ len(x)) with the active
// level's vector kernel: the row operations of the GNN layers (sums of
// neighbours' rows, their scatter in backward).
func Axpy(a float32, x, y []float32) { vecAxpy(a, x, y) }
