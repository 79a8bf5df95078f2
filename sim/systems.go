package sim

import (
	"fmt"
	"github.com/tierflow/tierflow/orderings/executor"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// IOPath is where partitions travel when they are swapped.
type IOPath string

// The I/O paths.
const (
	// DiskPath: disk ↔ CPU memory (Marius, PBG).
	DiskPath IOPath = "disk"
	// SSDToGPUPath: NVMe ↔ GPU memory directly (Legend).
	SSDToGPUPath IOPath = "ssd-gpu"
	// PCIePath: CPU memory ↔ GPU memory (GE2: parameters in RAM, GPU buffer).
	PCIePath IOPath = "pcie"
)

// BatchMode is how batches are built and computed.
type BatchMode string

// The batch modes.
const (
	// Pipeline: built on the CPU and computed on the GPU in a pipeline with
	// at most Staleness batches in flight (Marius §3).
	Pipeline BatchMode = "pipeline"
	// Synchronous: built on the CPU, then transferred, computed and written
	// back before the next batch starts (DGL-KE, Marius Algorithm 1; PBG).
	Synchronous BatchMode = "sync"
	// OnGPU: built and computed on the GPU (Legend, GE2, in-GPU training).
	OnGPU BatchMode = "gpu"
	// OnCPU: tierflow's own CPU engine (realrun): a bucket's batches run on
	// all CPU workers and the bucket ends when the last batch does.
	OnCPU BatchMode = "cpu"
)

// System is a training system's design, as a set of knobs.
type System struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Ordering is the system's own edge-bucket ordering.
	Ordering string `json:"ordering"`
	// Capacity is the buffer capacity the design fixes (0: any, from --c).
	Capacity int `json:"capacity"`
	// Partitioned systems keep parameters in p partitions and swap them
	// through a buffer; the others keep every parameter resident.
	Partitioned bool      `json:"partitioned"`
	IO          IOPath    `json:"io"`
	Batches     BatchMode `json:"batches"`
	// Prefetch issues each load as soon as the Plan allows (the evicted
	// partition's last use is done); without it a load waits until the
	// bucket that needs it is next.
	Prefetch bool `json:"prefetch"`
	// SyncWrites makes a load wait until the partition it replaces has been
	// written back; otherwise an async writer overlaps the write.
	SyncWrites bool `json:"sync_writes"`
	// PrefetchDepth is the number of staging buffers a prefetched partition
	// may be read into before its slot is free. 0 means loads start only
	// when the Plan's issue point is reached (a buffer of exactly c
	// partitions, as Legend's GPU buffer of three).
	PrefetchDepth int `json:"prefetch_depth"`
	// WriteBuffers, when positive, bounds the evicted partitions waiting
	// for the async writer: a load that evicts waits for a free one, and
	// hands its evicted partition to the writer as it starts (realrun's
	// spare buffer).
	WriteBuffers int `json:"write_buffers,omitempty"`
	// WriteAfterRead: an evicted partition's write-back goes to the
	// device only once the read it made way for has arrived (its checksum
	// may run beside the read), so a read and a write of the engine's
	// Plan never share the device (executor.Policy.WriteAfterRead).
	WriteAfterRead bool `json:"write_after_read,omitempty"`
	// Checksums: the engine checksums every partition on its loader's
	// thread after reading it and on its writer's thread before writing
	// it, at the profile's cpu.checksum rate (realrun's CRC-32C).
	Checksums bool `json:"checksums,omitempty"`
	// Staleness bounds the batches in flight (Marius uses 16).
	Staleness int `json:"staleness"`
	// GPUSlots: the c partition slots are in GPU memory; a partition read
	// from disk into host memory is then copied to its slot over PCIe, and
	// an evicted one copied back before it is written (tierflow's CUDA
	// engine, --buffer gpu). The copies overlap training.
	GPUSlots bool `json:"gpu_slots,omitempty"`
	// RowsOverPCIe: every batch's rows cross PCIe both ways between its
	// CPU and GPU stages (counted as transfer time, never hidden).
	RowsOverPCIe bool `json:"rows_over_pcie,omitempty"`
	// Resident says where the parameters live when not partitioned: "ram"
	// or "gpu".
	Resident string `json:"resident,omitempty"`
	// RowwiseAdagrad keeps one Adagrad accumulator per embedding row
	// instead of one per parameter (PBG §3 sums the accumulated gradient
	// over each embedding vector), so a partition holds d + 1 floats a row.
	RowwiseAdagrad bool `json:"rowwise_adagrad,omitempty"`
}

// PartitionBytes is the size of one of p node partitions under the
// system's optimizer state (workload.PartitionBytes: element-wise or,
// with RowwiseAdagrad, row-wise Adagrad).
func (s System) PartitionBytes(nodes int64, p, d int) int64 {
	return workload.PartitionBytes(nodes, p, d, s.RowwiseAdagrad)
}

// DataPartitionBytes is the size of one of ds's p partitions: its
// PartitionedNodes (every node but the resident types') split p ways.
func (s System) DataPartitionBytes(ds workload.Dataset, p, d int) int64 {
	return s.PartitionBytes(ds.PartitionedNodes(), p, d)
}

// ResidentTableBytes is the size of ds's resident table — the rows of its
// unpartitioned entity types (ResidentNodes) with their optimizer state,
// sized by the partition rule as one partition of them (0 without
// resident types): held in memory beside the buffer's partitions, read
// once at an epoch's start and written at its end.
func (s System) ResidentTableBytes(ds workload.Dataset, d int) int64 {
	return s.PartitionBytes(ds.ResidentNodes, 1, d)
}

// enginePolicy is the buffer policy of tierflow's own engines, which
// their models (realrun, realrun-cuda, realrun-cuda-host) take from the
// executor they share with the engines.
var enginePolicy = executor.Engine(true)

// Policy is the buffer manager's policy in the system's executor
// (orderings/executor) for a dataset with or without a resident table.
func (s System) Policy(resident bool) executor.Policy {
	return executor.Policy{Prefetch: s.Prefetch, Staging: s.PrefetchDepth, SyncWrites: s.SyncWrites,
		WriteBuffers: s.WriteBuffers, WriteAfterRead: s.WriteAfterRead, Resident: resident}
}

// DefaultCapacity is the buffer capacity for systems that leave it open.
const DefaultCapacity = 8

// Systems are the presets.
var Systems = []System{
	{Name: "marius", Description: "Marius: parameters on disk, CPU partition buffer of c, 5-stage pipeline (staleness 16), prefetch thread, async writer",
		Ordering: "beta", Partitioned: true, IO: DiskPath, Batches: Pipeline, Prefetch: true, PrefetchDepth: 1, Staleness: 16},
	{Name: "marius-inmem", Description: "Marius with every parameter in CPU memory (no partitions): the pipeline alone",
		Ordering: "", Batches: Pipeline, Staleness: 16, Resident: "ram"},
	{Name: "pbg", Description: "PyTorch-BigGraph: two partitions in memory, synchronous swaps, no prefetch, checkpoint at epoch end, row-wise Adagrad",
		Ordering: "inside-out", Capacity: 2, Partitioned: true, IO: DiskPath, Batches: Synchronous, SyncWrites: true, Staleness: 1, RowwiseAdagrad: true},
	{Name: "legend", Description: "Legend: GPU buffer of 3, SSD-to-GPU direct I/O, batches built on the GPU, next swap overlapping the current state's buckets",
		Ordering: "legend", Capacity: 3, Partitioned: true, IO: SSDToGPUPath, Batches: OnGPU, Prefetch: true, SyncWrites: true, Staleness: 16},
	{Name: "ge2", Description: "GE2: parameters in CPU memory, GPU buffer of 4 over PCIe, COVER order, batches built on the GPU",
		Ordering: "cover", Capacity: 4, Partitioned: true, IO: PCIePath, Batches: OnGPU, Prefetch: true, Staleness: 16},
	{Name: "dglke", Description: "DGL-KE: parameters in CPU memory, synchronous per-batch transfers (Marius Algorithm 1)",
		Batches: Synchronous, Staleness: 1, Resident: "ram"},
	{Name: "in-gpu", Description: "everything resident in GPU memory, batches built on the GPU",
		Batches: OnGPU, Staleness: 16, Resident: "gpu"},
	{Name: "realrun", Description: "tierflow's real engine on this machine's CPU: buffer of c, loads at the Plan's issue points, one spare buffer for the async writer, which writes an evicted partition once the read it made way for has arrived, partitions checksummed on the loader and writer threads, a bucket's batches on all workers (needs a calibrated device profile)",
		Ordering: "beta", Partitioned: true, IO: DiskPath, Batches: OnCPU, Prefetch: true, WriteBuffers: enginePolicy.WriteBuffers, WriteAfterRead: enginePolicy.WriteAfterRead, Checksums: true, Staleness: 1},
	{Name: "realrun-cuda", Description: "tierflow's CUDA engine, {Buffer} gpu: realrun's buffer manager, each partition read and checksummed into host memory then copied to its GPU slot over PCIe (and back before its write) while the GPU trains; batches one after another on the GPU (needs a calibrated GPU: realrun calibrate with the cuda engine)",
		Ordering: "beta", Partitioned: true, IO: DiskPath, Batches: OnGPU, Prefetch: true, WriteBuffers: enginePolicy.WriteBuffers, WriteAfterRead: enginePolicy.WriteAfterRead, Checksums: true, Staleness: 1, GPUSlots: true},
	{Name: "realrun-cuda-host", Description: "tierflow's CUDA engine, {Buffer} host: realrun's buffer manager with partitions in host memory; each batch sampled and its rows gathered on the CPU, shipped over PCIe, trained on the GPU and shipped back before the next",
		Ordering: "beta", Partitioned: true, IO: DiskPath, Batches: Synchronous, Prefetch: true, WriteBuffers: enginePolicy.WriteBuffers, WriteAfterRead: enginePolicy.WriteAfterRead, Checksums: true, Staleness: 1, RowsOverPCIe: true},
}

// SystemNames lists the presets in display order.
func SystemNames() []string {
	names := make([]string, len(Systems))
	for i, s := range Systems {
		names[i] = s.Name
	}
	return names
}

// LookupSystem returns the preset with the given name.
func LookupSystem(name string) (System, error) {
	for _, s := range Systems {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, fmt.Errorf("unknown system %q (want one of %s)", name, strings.Join(SystemNames(), ", "))
}
