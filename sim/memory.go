package sim

import "github.com/tierflow/tierflow/devices"

// BufferMemory is the memory a partitioned system's buffer occupies: its c
// slots plus the staging buffers of its prefetch reader and async writer,
// and the memory they live in (host memory on the disk path, GPU memory
// when the buffer is on the GPU).
type BufferMemory struct {
	Slots   int `json:"slots"`
	Staging int `json:"staging"`
	// Resident is the resident table held beside the slots (a typed
	// graph's unpartitioned entity types, WithResident), in Bytes.
	Resident int64  `json:"resident_bytes,omitempty"`
	Bytes    int64  `json:"bytes"`
	Limit    int64  `json:"limit"`
	Where    string `json:"where"`
}

// WithResident is the buffer with a resident table of n bytes held beside
// its partitions, in the same memory (System.ResidentTableBytes).
func (b BufferMemory) WithResident(n int64) BufferMemory {
	b.Resident += n
	b.Bytes += n
	return b
}

// Fits reports whether the buffer fits in the memory it lives in.
func (b BufferMemory) Fits() bool { return b.FitsIn(1) }

// FitsIn reports whether the buffer takes at most share of the memory it
// lives in (the rest is for edges, the OS and the framework). This is the
// one definition of "fits in memory".
func (b BufferMemory) FitsIn(share float64) bool { return float64(b.Bytes) <= share*float64(b.Limit) }

// Buffer returns the memory of a buffer of c partitions of partitionBytes
// each on the profile. Staging counts PrefetchDepth buffers when the system
// prefetches and one write buffer (or WriteBuffers) when it writes back
// asynchronously — Marius's lookahead and async-write blocks.
func (s System) Buffer(prof devices.Profile, c int, partitionBytes int64) BufferMemory {
	b := BufferMemory{Slots: c, Limit: int64(prof.CPU.Memory), Where: s.BufferIn()}
	if b.Where == "GPU" {
		b.Limit = int64(prof.GPU.Memory)
	}
	if s.Prefetch {
		b.Staging += s.PrefetchDepth
	}
	if !s.SyncWrites {
		b.Staging += max(s.WriteBuffers, 1)
	}
	b.Bytes = int64(b.Slots+b.Staging) * partitionBytes
	return b
}

// BufferIn is the memory a partitioned system's buffer lives in, "CPU" or
// "GPU" (Buffer).
func (s System) BufferIn() string {
	if s.IO == SSDToGPUPath || s.IO == PCIePath {
		return "GPU"
	}
	return "CPU"
}

// ResidentMemory returns the memory a system that keeps every parameter
// resident (not Partitioned) takes: all nodes' embeddings and their
// optimizer state — one partition at p = 1 — in GPU memory (Resident
// "gpu") or in host memory. This is the one account of it: the engine's
// warning, the GPU memory left to a batch and the sweep's fit use it.
func (s System) ResidentMemory(prof devices.Profile, nodes int64, d int) BufferMemory {
	b := BufferMemory{Bytes: s.PartitionBytes(nodes, 1, d), Limit: int64(prof.CPU.Memory), Where: "CPU"}
	if s.Resident == "gpu" {
		b.Limit, b.Where = int64(prof.GPU.Memory), "GPU"
	}
	return b
}

// InMemorySystems are the presets that keep every parameter resident —
// in GPU memory or in host memory — with no partitions to swap.
func InMemorySystems() []System {
	var out []System
	for _, s := range Systems {
		if !s.Partitioned {
			out = append(out, s)
		}
	}
	return out
}

// RelationMemory is the host memory the relations' parameters take beside
// the buffer of tierflow's CPU engine (the realrun system), which keeps
// them resident with their Adagrad state
// (workload.Model.ResidentRelationBytes: RelWidth(d)·relations·4·2 — a
// linear operator is d² floats a relation); 0 for the other systems,
// whose relations live on the GPU or are counted by their own model
// (SharedParamBytes).
func RelationMemory(cfg Config) int64 {
	if cfg.System.Batches != OnCPU {
		return 0
	}
	return cfg.Training.Model.ResidentRelationBytes(cfg.Training.Dim, cfg.Dataset.Relations)
}
