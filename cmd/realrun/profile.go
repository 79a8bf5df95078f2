package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime/pprof"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// startCPUProfile starts a CPU profile of the run (for `go tool pprof`); the
// returned stop ends it and writes it to path in one piece.
func startCPUProfile(path string, stderr io.Writer) (stop func() error, err error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
			return err
		}
		atomicfile.Announce(stderr, path)
		return nil
	}, nil
}
