//go:build cuda

package main

// The CUDA engine registers itself as --engine cuda.
import _ "github.com/tierflow/tierflow/realrun/cuda"
