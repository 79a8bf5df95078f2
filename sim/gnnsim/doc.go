// Package gnnsim predicts one epoch of GNN training (node classification
// over sampled blocks, realrun/gnn) on a device profile: it samples the
// run's own batches, splits each into the micro-batches the device's
// memory forces (or a fixed number), and costs every micro-batch's dense
// products, aggregation, feature transfer and the optimiser step into the
// epoch time, with the redundant input rows and bytes the split adds.
package gnnsim
