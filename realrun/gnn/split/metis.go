package split

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// GPMETIS is the METIS partitioning program Split runs: a name looked up
// in PATH or a path. Debian's metis package installs /usr/bin/gpmetis.
var GPMETIS = "gpmetis"

// METISAvailable reports whether GPMETIS can be run: nil, or an error
// naming the Debian package that provides it.
func METISAvailable() error {
	if _, err := exec.LookPath(GPMETIS); err != nil {
		return fmt.Errorf("METIS's %s program is needed and was not found (install Debian's metis package: apt-get install metis, or make metis-deps): %w", GPMETIS, err)
	}
	return nil
}

// gpmetis partitions g into k parts with GPMETIS and returns each node's
// part. It writes g in METIS's graph format to a temporary directory,
// runs `gpmetis -seed=S -ufactor=U file k` there and reads file.part.k
// back; the directory is removed before it returns.
func gpmetis(g *graph, k int, seed uint64) ([]int32, error) {
	dir, err := os.MkdirTemp("", "tierflow-split-")
	if err != nil {
		return nil, fmt.Errorf("gpmetis: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "graph")
	if err := writeMETIS(file, g); err != nil {
		return nil, fmt.Errorf("gpmetis: %w", err)
	}
	// METIS's seed is a C int; a negative one means "no seed".
	s := int64((seed ^ seed>>31) & 0x7fffffff)
	cmd := exec.Command(GPMETIS, "-seed="+strconv.FormatInt(s, 10), "-ufactor="+strconv.Itoa(ufactor), file, strconv.Itoa(k))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gpmetis on %d nodes, %d edges into %d parts: %w: %s", g.n(), g.edges(), k, err, lastLines(out, 3))
	}
	partFile := file + ".part." + strconv.Itoa(k)
	assign, err := readParts(partFile, g.n(), k)
	if err != nil {
		return nil, fmt.Errorf("gpmetis: %w (its output: %s)", err, lastLines(out, 3))
	}
	return assign, nil
}

// writeMETIS writes g in METIS's graph format: a header "n m" (m the
// undirected edges), then per node its neighbours, 1-based; with
// weights the header ends in fmt 001 and each neighbour is followed by
// its edge's weight.
func writeMETIS(file string, g *graph) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var line []byte
	line = strconv.AppendInt(line, int64(g.n()), 10)
	line = append(line, ' ')
	line = strconv.AppendInt(line, int64(g.edges()), 10)
	if g.wgt != nil {
		line = append(line, " 001"...)
	}
	line = append(line, '\n')
	w.Write(line)
	for v := 0; v < g.n(); v++ {
		line = line[:0]
		for e := g.ptr[v]; e < g.ptr[v+1]; e++ {
			if e > g.ptr[v] {
				line = append(line, ' ')
			}
			line = strconv.AppendInt(line, int64(g.adj[e])+1, 10)
			if g.wgt != nil {
				line = append(line, ' ')
				line = strconv.AppendInt(line, int64(g.wgt[e]), 10)
			}
		}
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// readParts reads a METIS partition file: n lines, each a part in
// [0, k).
func readParts(file string, n, k int) ([]int32, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the partition: %w", err)
	}
	assign := make([]int32, 0, n)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		p, err := strconv.Atoi(string(line))
		if err != nil || p < 0 || p >= k {
			return nil, fmt.Errorf("%s line %d: %q is not a part in 0–%d", filepath.Base(file), len(assign)+1, line, k-1)
		}
		if len(assign) == n {
			return nil, fmt.Errorf("%s: more than the %d nodes' lines", filepath.Base(file), n)
		}
		assign = append(assign, int32(p))
	}
	if len(assign) != n {
		return nil, fmt.Errorf("%s: %d lines for %d nodes", filepath.Base(file), len(assign), n)
	}
	return assign, nil
}

// lastLines returns the last n non-empty lines of out, joined by " | ".
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "***") {
			keep = append([]string{l}, keep...)
		}
	}
	if len(keep) == 0 {
		return "(no output)"
	}
	return strings.Join(keep, " | ")
}
