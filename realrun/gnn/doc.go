// Package gnn trains graph neural networks for node classification
// (GraphSAGE with mean, pool and LSTM aggregators, GAT, and a features-only
// MLP) on the CPU: sampled mini-batches of bipartite blocks, Adam,
// cross-entropy, per-epoch accuracy, checkpoints and resume in a work
// directory, and the final node representations for export.
//
// Its parts: data (the graph, features, labels and splits, read from files
// or generated), block (the neighbour sampler and the stack of blocks a
// batch is), nn (the layers, the models, the loss and Adam).
package gnn
