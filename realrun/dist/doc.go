// Package dist trains one work directory with several trainer processes,
// PyTorch-BigGraph's distributed mode on real parts: trainers take buckets
// through the lock-server policy (orderings/lockserver) held in etcd under
// leases, move partitions through a shared store (the work directory, or
// an S3-compatible object store: a user's, ObjectStore, reached with each
// trainer's own credentials, or the launcher's embedded in-memory one) as
// versioned files committed with each bucket's release, and keep relation
// parameters in step through etcd (in chunks under etcd's request limit,
// each added to by compare-and-swap: RelationChunk). A run through an object store keeps
// everything a trainer needs there (manifest, degrees, edges,
// partitions): its trainers need etcd and the store, no work directory.
// realrun --trainers N (TrainDistributed) uses an existing etcd cluster
// (EtcdClient: endpoints, TLS, a user and password) or starts its own —
// one member embedded in the process, or a cluster of members as
// processes of their own (StartCluster, RunMember) that survives the loss
// of one — with authentication on and a root password new for the run,
// and starts N trainer processes; realrun trainer (RunTrainer) joins one
// from anywhere. Passwords travel in trainers' environments or files,
// never on command lines.
// The run waits after every epoch (RunState.Hold) while the launcher
// commits it as a checkpoint of the work directory and evaluates it as
// one machine does (job.Opened.AfterEpoch: validation, the best epoch,
// early stopping); a run resumes from such a checkpoint. Inside an epoch
// the launcher checkpoints by pausing the lock server (RunState.Pause:
// no bucket goes out), waiting for the buckets in flight to be
// committed, and committing the partitions' versions with the lock
// server's state (realrun.Position.Lock): every bucket done is in the
// checkpoint once and no other, and a resumed run trains the rest. A
// saved Plan's bucket order is the lock server's priority
// (lockserver.State.Order); with a trace the trainers report their
// spans, which the launcher puts beside its own (DistOutput.Trace).
// It is the only package that links etcd.
package dist
