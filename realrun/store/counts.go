package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/tierflow/tierflow/workload"
)

// BucketCounts returns the training edges per bucket, counts[k][src][dst],
// at each partition count ps[k]: at p' partitions node n (a store id)
// lives in partition n / ceil(Nodes/p'), the rule the Builder partitions
// by. The relabelling permutation is drawn from the seed and the node
// count alone, never from p, so the counts at p' are exactly the buckets
// that building the same input with the same seed at p' would write. The
// directory's own p is answered from the manifest; any other p takes one
// streaming pass over the bucket files (every file checked against its
// checksum), shared by all of them.
func (s *Store) BucketCounts(ps []int) ([][][]int64, error) {
	out := make([][][]int64, len(ps))
	var todo []int // indexes of ps that need the pass
	for k, p := range ps {
		if p < 1 || int64(p) > s.M.Nodes {
			return nil, fmt.Errorf("p = %d partitions for the %d nodes of %s", p, s.M.Nodes, s.Dir)
		}
		if p == s.M.P {
			out[k] = cloneCounts(s.M.Buckets)
			continue
		}
		if s.M.Resident > 0 {
			return nil, fmt.Errorf("%s has resident entity types: its buckets at p = %d (not its own %d) are not known (an edge between resident nodes goes to a bucket by its place in the training file)", s.Dir, p, s.M.P)
		}
		out[k] = newCounts(p)
		todo = append(todo, k)
	}
	if len(todo) == 0 {
		return out, nil
	}
	rows := make([]int64, len(todo))
	for i, k := range todo {
		rows[i] = workload.PartitionRows(s.M.Nodes, ps[k])
	}
	// Workers take whole bucket files and count into their own arrays;
	// the sums do not depend on which worker counted what.
	type part struct{ i, j int }
	next := make(chan part)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	workers := min(runtime.GOMAXPROCS(0), s.M.P*s.M.P)
	for range workers {
		local := make([][][]int64, len(todo))
		for i, k := range todo {
			local[i] = newCounts(ps[k])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			for b := range next {
				if err == nil {
					err = s.countBucket(b.i, b.j, rows, local)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			for i, k := range todo {
				for a, row := range local[i] {
					for b, n := range row {
						out[k][a][b] += n
					}
				}
			}
		}()
	}
	for i := range s.M.P {
		for j := range s.M.P {
			next <- part{i, j}
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// countBucket streams bucket (i, j)'s file, checks its length and
// checksum against the manifest, and adds each edge to counts[k] at
// rows[k] rows per partition.
func (s *Store) countBucket(i, j int, rows []int64, counts [][][]int64) error {
	want := s.M.Buckets[i][j]
	if want == 0 {
		return nil
	}
	name := BucketName(i, j)
	path := filepath.Join(s.Dir, name)
	sum, ok := s.M.Checksums[name]
	if !ok {
		return fmt.Errorf("%s: no checksum recorded in the manifest: %w", path, ErrCorrupt)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("count bucket (%d, %d): %w", i, j, err)
	}
	defer f.Close()
	h := crc32.New(crcTable)
	r := bufio.NewReaderSize(io.TeeReader(f, h), 1<<20)
	var e [edgeBytes]byte
	var n int64
	for {
		if _, err := io.ReadFull(r, e[:]); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		src := int64(int32(binary.LittleEndian.Uint32(e[:])))
		dst := int64(int32(binary.LittleEndian.Uint32(e[8:])))
		if src < 0 || src >= s.M.Nodes || dst < 0 || dst >= s.M.Nodes {
			return fmt.Errorf("%s: edge %d has node ids (%d, %d) outside [0, %d)", path, n, src, dst, s.M.Nodes)
		}
		for k, r := range rows {
			counts[k][src/r][dst/r]++
		}
		n++
	}
	if n != want {
		return fmt.Errorf("%s: %d edges, the manifest records %d", path, n, want)
	}
	if got := uint64(h.Sum32()); got != sum {
		return fmt.Errorf("%s: checksum %016x, recorded %016x: %w", path, got, sum, ErrCorrupt)
	}
	return nil
}

func newCounts(p int) [][]int64 {
	c := make([][]int64, p)
	for i := range c {
		c[i] = make([]int64, p)
	}
	return c
}

func cloneCounts(b [][]int64) [][]int64 {
	c := make([][]int64, len(b))
	for i, row := range b {
		c[i] = append([]int64(nil), row...)
	}
	return c
}
