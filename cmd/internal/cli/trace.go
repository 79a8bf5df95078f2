package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/chrometrace"
)

// DefaultTraceSpans caps a trace file's spans (--trace-max-spans): about
// 30 MB of JSON, which Perfetto's UI and chrome://tracing open.
const DefaultTraceSpans = 200_000

// TraceFlags registers --trace and --trace-max-spans on fs.
func TraceFlags(fs *flag.FlagSet, path *string, maxSpans *int) {
	fs.StringVar(path, "trace", "", "write the run as Chrome trace-event JSON to `FILE`.json (open it in ui.perfetto.dev or chrome://tracing)")
	fs.IntVar(maxSpans, "trace-max-spans", DefaultTraceSpans, "cut every run of the trace at the moment after which it would hold more events (0: no cap)")
}

// CheckTrace checks, before any work, that a trace can be written to
// path: a .json name in a directory that takes a new file.
func CheckTrace(path string, maxSpans int) error {
	if path == "" {
		return nil
	}
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return Usagef("--trace %s: a trace is Chrome trace-event JSON: name it .json", path)
	}
	if maxSpans < 0 {
		return Usagef("--trace-max-spans %d: must not be negative (0: no cap)", maxSpans)
	}
	if err := atomicfile.CheckWritable(path); err != nil {
		return Usagef("--trace: %w", err)
	}
	return nil
}

// WriteTrace writes processes to path as Chrome trace-event JSON (the
// fields a cut process's name names by their flags: Render) and
// announces it on stderr.
func WriteTrace(path string, procs []chrometrace.Process, maxSpans int, stderr io.Writer) error {
	f := chrometrace.Build(procs, maxSpans)
	for _, e := range f.TraceEvents {
		if name, ok := e.Args["name"].(string); ok && e.Ph == "M" && e.Name == "process_name" {
			e.Args["name"] = Render(name)
		}
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(f) }); err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	atomicfile.Announce(stderr, path)
	return nil
}
