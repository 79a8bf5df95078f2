// Package sim is tierflow's discrete-event simulator of one training epoch:
// it interprets a Plan on modelled disks, PCIe links, CPU and GPU and
// predicts epoch time, stalls, utilisation and bytes as a Report.
//
// # Kernel
//
// Kernel is an event heap over virtual seconds, ties broken by scheduling
// order, so a run is deterministic and independent of GOMAXPROCS. A Server
// is a first-come-first-served stage (the CPU workers of a pipeline stage
// taken together, a GPU stream). A Link moves bytes: transfers in one
// direction share its bandwidth equally, and reads and writes interfere as
// the device profile says (full duplex, a combined cap, or time-shared).
// Every transfer pays the device's per-request latency first.
//
// # Systems
//
// A System is a set of knobs with presets (Systems): marius (disk, a CPU
// buffer of c partitions, a CPU→GPU pipeline with a staleness bound, a
// prefetch thread with one staging buffer, an async writer), pbg (two
// partitions, synchronous swaps, no prefetch, checkpoint at epoch end),
// legend (GPU buffer of 3, SSD-to-GPU reads and writes, batches built on
// the GPU, the next load in flight during the current state's other
// buckets), ge2 (parameters in CPU memory, GPU buffer of 4 over PCIe),
// dglke (everything in CPU memory, every batch synchronous), in-gpu, and
// realrun — tierflow's own CPU engine, whose bucket time is the makespan
// of its batches over the CPU workers at the rates `realrun calibrate`
// measures (devices.TrainCost), with one spare buffer for the async
// writer, so that a real run and its prediction can be compared; and
// realrun-cuda and realrun-cuda-host, its CUDA engine: with --buffer gpu
// (System.GPUSlots) each load, once read and checksummed, is copied to its
// GPU slot over PCIe and each eviction copied back before its write, on
// links of their own beside the GPU's training, whose overlap with it the
// Report gives (TransferSeconds, HiddenTransferSeconds); with --buffer host
// every batch ships its rows both ways between its CPU and GPU stages.
// The buffer manager never derives its own schedule: it is the engines'
// executor (orderings/executor) under the system's Policy (System.Policy),
// whose actions the simulator carries out on modelled devices. Loads are
// read in the Plan's order and installed when the Plan's issue point is
// reached (the partition they replace has had its last use); with
// prefetch a load may be read earlier into a staging buffer
// (System.PrefetchDepth), without it a load waits until every earlier
// bucket is done.
//
// # Several machines and several GPUs
//
// Beside the Plan-driven epoch, SimulatePBG models PyTorch-BigGraph's
// trainer loop on one machine (inside-out order, synchronous swaps to
// disk) or several (buckets from the lock server of orderings/lockserver,
// partitions on partition servers over a Net of max-min-fair links, edges
// from a shared filesystem, a throttled parameter sync), its CPU trainer
// costed by devices.CPUBucketTime; SimulateMultiGPU models GE2 and DGL-KE on
// several GPUs of one machine, SimulatePBGGPU PBG's GPU mode.
//
// # Compute cost model
//
// A batch of b edges with N negatives shared per chunk of K edges (PBG
// §4.3) touches rows = 2b + 2·ceil(b/K)·N embedding rows of d float32 and
// needs 12·b·N·d·f FLOPs (both sides corrupted, 2 FLOPs per multiply-add,
// forward plus backward ≈ 3× forward; f = 2 for ComplEx on the paper
// systems, 1 otherwise) plus the rest of the cost rule of the model
// (workload.ModelCost: each query's operator — 6d² for linear — the
// comparator's norms and per-score work, pairwise operations of l1 and
// modulus_l1 counted as FLOPs on a GPU, and each edge's relation row in
// the memory traffic of GPU-built batches). When the CPU builds batches
// (Marius, PBG, DGL-KE):
//
//	CPU = b ÷ cpu.batch_edges + rows·d·4·f ÷ cpu.gather_bandwidth
//	GPU = rows·d·4 ÷ pcie.h2d + FLOPs ÷ gpu.flops + rows·d·4 ÷ pcie.d2h
//
// and the GPU stage is serial because Marius runs every GPU operation on
// the default CUDA stream (Marius §5.2). When the GPU builds batches
// (Legend, GE2, in-GPU):
//
//	GPU = b ÷ gpu.batch_edges + FLOPs ÷ gpu.flops + 3·rows·d·4 ÷ gpu.memory_bandwidth
//
// The fit. The two CPU rates of p3.2xlarge are fitted to Marius Table 8's
// in-memory Freebase86m runs (ComplEx, batch 50,000, 1,000 negatives, 90%
// of 338M edges trained: 6,084 batches): d=20 takes 4 min (39.45 ms per
// batch) and d=50 4.8 min (47.34 ms), so a batch costs 34.19 ms + 0.263
// ms·d: cpu.batch_edges = 50,000 ÷ 34.19 ms = 1.462M edges/s and
// cpu.gather_bandwidth = 200,000 rows × 4 B × 2 ÷ 0.263 ms = 6.08 GB/s. The
// fit was not tuned to anything else; it predicts Marius' Twitter epoch
// (Dot, d=100, 1.31B training edges: 47.4 ms per batch, 1,246 s per epoch)
// within 1% of Table 4's 3 h 28 min for 10 epochs (1,248 s per epoch). The
// GPU terms use the V100's data-sheet bandwidth, PCIe 3 at 12 GB/s and 45%
// of its peak FLOPs, and stay below the CPU stage at the papers' settings.
// The legend-a100 GPU's flops (15.6 TFLOP/s) are fitted to Legend §4's
// t ≈ 1e-7 s per edge: 12·1,000·100 FLOPs ÷ 15.6 TFLOP/s + 1 ÷ 50M edges/s
// + 4,800 B ÷ 1,555 GB/s = 1.0e-7 s for a Dot edge at d=100, batches of
// 50,000 and 1,000 negatives.
//
// # Counting and bounds
//
// Swaps, loads, writes and bytes come from the Plan (orderings package).
// BoundSeconds is the larger of the compute alone (the busier pipeline
// stage, or the sum of both stages when batches are synchronous) and the
// I/O of the initial fill plus the lower-bound number of swaps (Marius
// eq. 2), with as many writes, at the device's bandwidth — summed where
// reads and writes share it. No schedule can beat it.
package sim
