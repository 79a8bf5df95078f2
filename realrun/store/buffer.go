package store

// The aligned partition Buffer, partition reads and writes, and the initial partitions.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"unsafe"
)

// Buffer is page-aligned memory for one partition, as O_DIRECT needs.
type Buffer struct {
	b        []byte
	mapping  []byte // what alignedBuffer mapped to hold b (freed by Free)
	borrowed bool
}

// NewBuffer allocates an aligned buffer of the store's partition size.
func (s *Store) NewBuffer() (*Buffer, error) {
	b, m, err := alignedBuffer(int(s.M.PartitionBytes))
	if err != nil {
		return nil, fmt.Errorf("allocate %d-byte partition buffer: %w", s.M.PartitionBytes, err)
	}
	return &Buffer{b: b, mapping: m}, nil
}

// BufferOf wraps float32s already in memory as a Buffer (for in-memory
// benchmarks; it cannot be used for O_DIRECT I/O unless aligned).
func BufferOf(f []float32) *Buffer {
	return &Buffer{b: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f)), borrowed: true}
}

// OpenDirect opens a file for O_DIRECT I/O where the platform has it.
func OpenDirect(path string, flag int) (*os.File, error) { return openDirect(path, flag) }

// Free releases the buffer's memory.
func (b *Buffer) Free() error {
	if b.b == nil || b.borrowed {
		b.b = nil
		return nil
	}
	err := freeBuffer(b.mapping)
	b.b, b.mapping = nil, nil
	return err
}

// Floats views the buffer as float32: the first rows·d are the
// embeddings, the next rows·d the Adagrad state.
func (b *Buffer) Floats() []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b.b))), len(b.b)/4)
}

// Bytes is the raw buffer.
func (b *Buffer) Bytes() []byte { return b.b }

// ReadPartition reads partition i of the current checkpoint into buf with
// O_DIRECT and returns the bytes read from the device (unchecked: see
// ReadPartitionChecked).
func (s *Store) ReadPartition(i int, buf *Buffer) (int64, error) {
	return ReadPartitionIn(s.CurrentDir(), i, buf)
}

// ReadPartitionIn reads partition i of checkpoint directory dir.
func ReadPartitionIn(dir string, i int, buf *Buffer) (int64, error) {
	f, err := openDirect(PartitionIn(dir, i), os.O_RDONLY)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", partLabel(i), err)
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf.b)
	if err != nil {
		return int64(n), fmt.Errorf("read %s: %w", partLabel(i), err)
	}
	return int64(n), nil
}

// WritePartition writes buf to partition i's file in the current
// checkpoint with O_DIRECT.
func (s *Store) WritePartition(i int, buf *Buffer) (int64, error) {
	return WritePartitionIn(s.CurrentDir(), i, buf)
}

// WritePartitionIn writes buf to partition i's file in directory dir. A
// file that a checkpoint links is replaced, never written in place, so
// the checkpoint keeps it; one that no other name links is overwritten
// (overwrite).
func WritePartitionIn(dir string, i int, buf *Buffer) (int64, error) {
	return writeDirect(PartitionIn(dir, i), buf.b)
}

// InitPartitions starts training afresh: it drops every checkpoint and
// rewrites the initial partitions (checkpoint 0): embeddings uniform in
// [-scale, scale] drawn from seed, Adagrad state zero.
func (s *Store) InitPartitions(seed int64, scale float32) error {
	return s.InitPartitionsWith(seed, scale, nil)
}

// InitPartitionsWith is InitPartitions with fill (nil: none) called on
// each partition's embeddings (Rows × Dim, row r is node i·Rows+r) after
// they are drawn and before they are written, so that it may set some
// rows (a warm start); the draws do not depend on fill. A typed
// directory's resident table (resident.bin) is drawn the same way from
// its own stream of seed (fill does not see it).
func (s *Store) InitPartitionsWith(seed int64, scale float32, fill func(part int, emb []float32) error) error {
	if err := s.Reset(); err != nil {
		return err
	}
	buf, err := s.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x696e6974)) // "init"
	f := buf.Floats()
	n := int(s.M.Rows) * s.M.Dim
	sums := map[int]uint64{}
	for i := 0; i < s.M.P; i++ {
		for k := range f {
			f[k] = 0
		}
		for k := 0; k < n; k++ {
			f[k] = (2*rng.Float32() - 1) * scale
		}
		if fill != nil {
			if err := fill(i, f[:n]); err != nil {
				return err
			}
		}
		if _, err := s.WritePartition(i, buf); err != nil {
			return err
		}
		sums[i] = Checksum(buf.Bytes())
	}
	if s.M.Resident > 0 {
		sum, err := s.initResident(seed, scale)
		if err != nil {
			return err
		}
		sums[ResidentPart] = sum
	}
	return writeSums(s.CheckpointDir(0, 0), sums, nil)
}
