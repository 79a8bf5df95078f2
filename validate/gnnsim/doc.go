// Package gnnsim predicts one epoch of GNN training (node classification
// over sampled blocks, realrun/gnn) on a device profile: it samples the
// run's own batches, splits each into the micro-batches the device's
// memory forces (or a fixed number), and costs every micro-batch's dense
// products, aggregation, feature transfer and the optimiser step into the
// epoch time, with the redundant input rows and bytes the split adds. It
// lives beside the bridge (validate), not under sim, which imports no
// engine: it predicts from the engine's own sampler, splits and cost
// counters, so that a prediction and the run it checks see the same
// batches.
package gnnsim
