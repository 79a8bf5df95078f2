package block

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// The block file format (--save-blocks; the PyTorch comparison reads it),
// little-endian: the 8 bytes Magic, uint32 Version, uint32 batches; then
// per batch a uint32 block count and per block uint32 numSrc, numDst,
// numEdges, int32[numSrc] Src, int32[numDst+1] Ptr, int32[numEdges] Nbr.
const (
	Magic   = "TFGNNBLK"
	Version = 1
)

// EpochFile is the name of an epoch's block file in a --save-blocks
// directory (epochs count from 1): epoch-0001.blocks, ….
func EpochFile(epoch int) string { return fmt.Sprintf("epoch-%04d.blocks", epoch) }

// Writer streams batches into a block file whose batch count is known in
// advance.
type Writer struct {
	w       *bufio.Writer
	want, n int
	buf     []byte
	err     error
}

// NewWriter writes the header of a file of batches batches to w.
func NewWriter(w io.Writer, batches int) (*Writer, error) {
	if batches < 0 || batches > math.MaxUint32 {
		return nil, fmt.Errorf("block file: %d batches, not a uint32", batches)
	}
	bw := &Writer{w: bufio.NewWriterSize(w, 1<<16), want: batches}
	h := append([]byte(Magic), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(h[8:], Version)
	binary.LittleEndian.PutUint32(h[12:], uint32(batches))
	if _, err := bw.w.Write(h); err != nil {
		return nil, fmt.Errorf("block file header: %w", err)
	}
	return bw, nil
}

// Write appends one batch; it refuses a batch whose blocks are
// inconsistent (Ptr or Nbr not matching NumDst and the edge count) or one
// more than the header announced.
func (w *Writer) Write(b *Batch) error {
	if w.err != nil {
		return w.err
	}
	if w.n == w.want {
		return fmt.Errorf("block file: batch %d beyond the %d announced", w.n, w.want)
	}
	if len(b.Blocks) > math.MaxUint32 {
		return fmt.Errorf("block file: batch %d has %d blocks", w.n, len(b.Blocks))
	}
	le := binary.LittleEndian
	w.buf = le.AppendUint32(w.buf[:0], uint32(len(b.Blocks)))
	for l := range b.Blocks {
		blk := &b.Blocks[l]
		if blk.NumDst < 0 || blk.NumDst > len(blk.Src) || len(blk.Ptr) != blk.NumDst+1 ||
			len(blk.Src) > math.MaxInt32 || int(blk.Ptr[blk.NumDst]) != len(blk.Nbr) {
			return fmt.Errorf("block file: batch %d block %d is malformed (%d sources, %d destinations, %d pointers, %d neighbours)",
				w.n, l, len(blk.Src), blk.NumDst, len(blk.Ptr), len(blk.Nbr))
		}
		w.buf = le.AppendUint32(w.buf, uint32(len(blk.Src)))
		w.buf = le.AppendUint32(w.buf, uint32(blk.NumDst))
		w.buf = le.AppendUint32(w.buf, uint32(len(blk.Nbr)))
		for _, s := range [][]int32{blk.Src, blk.Ptr, blk.Nbr} {
			for _, v := range s {
				w.buf = le.AppendUint32(w.buf, uint32(v))
			}
		}
		if len(w.buf) >= 1<<20 {
			if _, err := w.w.Write(w.buf); err != nil {
				w.err = fmt.Errorf("block file: batch %d: %w", w.n, err)
				return w.err
			}
			w.buf = w.buf[:0]
		}
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("block file: batch %d: %w", w.n, err)
		return w.err
	}
	w.n++
	return nil
}

// Close flushes the file; it fails if fewer batches were written than
// announced. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.n != w.want {
		return fmt.Errorf("block file: %d batches written, %d announced", w.n, w.want)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("block file: %w", err)
	}
	return nil
}

// WriteBatches writes batches in the block file format.
func WriteBatches(w io.Writer, bs []*Batch) error {
	bw, err := NewWriter(w, len(bs))
	if err != nil {
		return err
	}
	for _, b := range bs {
		if err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Close()
}

// WriteFile writes batches to the block file path.
func WriteFile(path string, bs []*Batch) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteBatches(f, bs); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Reader reads a block file batch by batch, checking every count and
// index: its memory grows with the bytes actually read, never with what a
// header claims.
type Reader struct {
	r       *bufio.Reader
	batches int
	n       int
	buf     []byte
}

// NewReader reads and checks the header of a block file.
func NewReader(r io.Reader) (*Reader, error) {
	br := &Reader{r: bufio.NewReaderSize(r, 1<<16)}
	var h [16]byte
	if _, err := io.ReadFull(br.r, h[:]); err != nil {
		return nil, fmt.Errorf("block file header: %w", eof(err))
	}
	if string(h[:8]) != Magic {
		return nil, fmt.Errorf("block file header: magic %q, want %q", h[:8], Magic)
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != Version {
		return nil, fmt.Errorf("block file header: version %d, want %d", v, Version)
	}
	br.batches = int(binary.LittleEndian.Uint32(h[12:]))
	return br, nil
}

// Len returns the number of batches the header announces.
func (r *Reader) Len() int { return r.batches }

// eof turns a clean EOF inside a structure into ErrUnexpectedEOF.
func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("truncated: %w", io.ErrUnexpectedEOF)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated: %w", err)
	}
	return err
}

// u32s reads n uint32s into dst[:0] as int32s, at most 64 Ki at a time.
func (r *Reader) u32s(dst []int32, n int) ([]int32, error) {
	dst = dst[:0]
	for n > 0 {
		c := min(n, 1<<16)
		if cap(r.buf) < 4*c {
			r.buf = make([]byte, 4*c)
		}
		b := r.buf[:4*c]
		if _, err := io.ReadFull(r.r, b); err != nil {
			return dst, eof(err)
		}
		for i := 0; i < c; i++ {
			dst = append(dst, int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
		n -= c
	}
	return dst, nil
}

// Next returns the next batch, or io.EOF after the last (having checked
// that nothing follows it).
func (r *Reader) Next() (*Batch, error) {
	if r.n == r.batches {
		var one [1]byte
		if k, _ := io.ReadFull(r.r, one[:]); k > 0 {
			return nil, fmt.Errorf("block file: data after the %d announced batches", r.batches)
		}
		return nil, io.EOF
	}
	b, err := r.batch()
	if err != nil {
		return nil, fmt.Errorf("block file: batch %d: %w", r.n, err)
	}
	r.n++
	return b, nil
}

// batch reads and checks one batch.
func (r *Reader) batch() (*Batch, error) {
	var h [12]byte
	if _, err := io.ReadFull(r.r, h[:4]); err != nil {
		return nil, fmt.Errorf("block count: %w", eof(err))
	}
	nb := binary.LittleEndian.Uint32(h[:4])
	if nb == 0 {
		return nil, errors.New("no blocks")
	}
	b := &Batch{}
	for l := 0; l < int(nb); l++ {
		if _, err := io.ReadFull(r.r, h[:]); err != nil {
			return nil, fmt.Errorf("block %d header: %w", l, eof(err))
		}
		ns := binary.LittleEndian.Uint32(h[0:])
		nd := binary.LittleEndian.Uint32(h[4:])
		ne := binary.LittleEndian.Uint32(h[8:])
		switch {
		case ns > math.MaxInt32:
			return nil, fmt.Errorf("block %d: numSrc %d over 2³¹-1", l, ns)
		case nd > ns:
			return nil, fmt.Errorf("block %d: numDst %d > numSrc %d", l, nd, ns)
		case ne > math.MaxInt32:
			return nil, fmt.Errorf("block %d: numEdges %d over 2³¹-1", l, ne)
		}
		blk := Block{NumDst: int(nd)}
		var err error
		if blk.Src, err = r.u32s(nil, int(ns)); err != nil {
			return nil, fmt.Errorf("block %d Src: %w", l, err)
		}
		for i, v := range blk.Src {
			if v < 0 {
				return nil, fmt.Errorf("block %d: Src[%d] = %d, negative", l, i, v)
			}
		}
		if l > 0 {
			prev := &b.Blocks[l-1]
			if prev.NumDst != len(blk.Src) {
				return nil, fmt.Errorf("block %d: numSrc %d, but block %d has %d destinations", l, len(blk.Src), l-1, prev.NumDst)
			}
			for i, v := range blk.Src {
				if prev.Src[i] != v {
					return nil, fmt.Errorf("block %d: Src[%d] = %d, but block %d's destination %d is %d", l, i, v, l-1, i, prev.Src[i])
				}
			}
		}
		if blk.Ptr, err = r.u32s(nil, int(nd)+1); err != nil {
			return nil, fmt.Errorf("block %d Ptr: %w", l, err)
		}
		if blk.Ptr[0] != 0 {
			return nil, fmt.Errorf("block %d: Ptr[0] = %d, want 0", l, blk.Ptr[0])
		}
		for i := 1; i < len(blk.Ptr); i++ {
			if blk.Ptr[i] < blk.Ptr[i-1] {
				return nil, fmt.Errorf("block %d: Ptr[%d] = %d < Ptr[%d] = %d", l, i, blk.Ptr[i], i-1, blk.Ptr[i-1])
			}
		}
		if last := blk.Ptr[nd]; last != int32(ne) {
			return nil, fmt.Errorf("block %d: Ptr[%d] = %d, but numEdges is %d", l, nd, last, ne)
		}
		if blk.Nbr, err = r.u32s(nil, int(ne)); err != nil {
			return nil, fmt.Errorf("block %d Nbr: %w", l, err)
		}
		for i := 0; i < int(nd); i++ {
			for e := blk.Ptr[i]; e < blk.Ptr[i+1]; e++ {
				if v := blk.Nbr[e]; v < 0 || v >= int32(ns) {
					return nil, fmt.Errorf("block %d: Nbr[%d] = %d, outside [0, numSrc %d)", l, e, v, ns)
				} else if int(v) == i {
					return nil, fmt.Errorf("block %d: Nbr[%d]: destination %d is its own neighbour", l, e, i)
				}
			}
		}
		b.Blocks = append(b.Blocks, blk)
	}
	return b, nil
}

// ReadBatches reads a whole block file, checking every count and index;
// a malformed file is an error naming the batch, block and field.
func ReadBatches(r io.Reader) ([]*Batch, error) {
	br, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	var bs []*Batch
	for {
		b, err := br.Next()
		if err == io.EOF {
			return bs, nil
		}
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
}

// ReadFile reads the block file path.
func ReadFile(path string) ([]*Batch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bs, err := ReadBatches(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return bs, nil
}
