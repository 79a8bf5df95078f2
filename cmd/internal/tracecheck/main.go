// Command tracecheck checks trace files the way a viewer reads them
// (chrometrace.Check) and prints what each holds: make check-trace runs it
// before opening them in a browser.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/tierflow/tierflow/internal/chrometrace"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tracecheck FILE.json ...")
		os.Exit(2)
	}
	bad := false
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err == nil {
			err = chrometrace.Check(data)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "tracecheck: %s: %v\n", path, err)
			bad = true
			continue
		}
		var f chrometrace.File
		_ = json.Unmarshal(data, &f)
		count := map[string]int{}
		for _, e := range f.TraceEvents {
			count[e.Ph]++
		}
		var kinds []string
		for k := range count {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, count[k]))
		}
		sort.Strings(kinds)
		fmt.Printf("%s: ok, %d bytes, events by phase: %v\n", path, len(data), kinds)
	}
	if bad {
		os.Exit(1)
	}
}
