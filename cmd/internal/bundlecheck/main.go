// Command bundlecheck checks what the GPU bundle's run.sh wrote (make
// check-gpu-bundle runs it after the bundle ran end to end): steps.json
// and env.json parse; every step group of the GPU-verification run is
// there; each step is run, "run (emulated: no GPU)", skipped or failed,
// every status but run says why, and each output it names exists; and no
// step failed. It prints one line per step group.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Step is one entry of steps.json.
type Step struct {
	Step    string   `json:"step"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason"`
	Seconds *float64 `json:"seconds"`
	Outputs []string `json:"outputs"`
}

// Groups are the steps run.sh must record (a group's steps are named
// GROUP or GROUP/NAME).
var Groups = []string{"ceilings", "gpu-tests", "emulator-tests", "throughput", "profile", "quality", "calibrate", "compare-sim-databound"}

// Statuses are the statuses a step may have.
var Statuses = []string{"run", "run (emulated: no GPU)", "skipped", "failed"}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bundlecheck OUTDIR (the folder given to gpu-bundle/run.sh)")
		os.Exit(2)
	}
	lines, err := Check(os.Args[1])
	for _, l := range lines {
		fmt.Println(l)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundlecheck:", err)
		os.Exit(1)
	}
}

// Check reads dir's steps.json and env.json and returns a line per group,
// or the first problem.
func Check(dir string) ([]string, error) {
	var env map[string]any
	if err := readJSON(filepath.Join(dir, "env.json"), &env); err != nil {
		return nil, err
	}
	for _, k := range []string{"date", "hostname", "nproc", "mode"} {
		if _, ok := env[k]; !ok {
			return nil, fmt.Errorf("env.json: no %q", k)
		}
	}
	var steps []Step
	if err := readJSON(filepath.Join(dir, "steps.json"), &steps); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.txt")); err != nil {
		return nil, err
	}
	count := map[string]map[string]int{}
	for i, s := range steps {
		group, _, _ := strings.Cut(s.Step, "/")
		if !slices.Contains(Groups, group) {
			return nil, fmt.Errorf("steps.json[%d]: unknown step %q", i, s.Step)
		}
		if !slices.Contains(Statuses, s.Status) {
			return nil, fmt.Errorf("step %s: status %q, want one of %q", s.Step, s.Status, Statuses)
		}
		if s.Status != "run" && strings.TrimSpace(s.Reason) == "" {
			return nil, fmt.Errorf("step %s: %s without a reason", s.Step, s.Status)
		}
		if s.Seconds == nil || *s.Seconds < 0 {
			return nil, fmt.Errorf("step %s: no seconds", s.Step)
		}
		for _, o := range s.Outputs {
			if _, err := os.Stat(filepath.Join(dir, o)); err != nil {
				return nil, fmt.Errorf("step %s: output %w", s.Step, err)
			}
		}
		if s.Status == "failed" {
			return nil, fmt.Errorf("step %s failed: %s", s.Step, s.Reason)
		}
		if count[group] == nil {
			count[group] = map[string]int{}
		}
		count[group][s.Status]++
	}
	var lines []string
	for _, g := range Groups {
		if len(count[g]) == 0 {
			return lines, fmt.Errorf("no step %s in steps.json", g)
		}
		var parts []string
		for _, st := range Statuses {
			if n := count[g][st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		lines = append(lines, fmt.Sprintf("%-18s %s", g, strings.Join(parts, ", ")))
	}
	lines = append(lines, fmt.Sprintf("bundlecheck: %s: %d steps, none failed (mode %v)", dir, len(steps), env["mode"]))
	return lines, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
