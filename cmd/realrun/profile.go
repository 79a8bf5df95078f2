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
func startCPUProfile(path string) (stop func() error, err error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return atomicfile.Write(path, func(w io.Writer) error {
			_, err := w.Write(buf.Bytes())
			return err
		})
	}, nil
}
