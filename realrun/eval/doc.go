// Package eval reads trained embeddings back from a work directory: it
// ranks test edges against every node (filtered) or against sampled ones
// (MRR, Hits@k, with the random baseline), and exports the embeddings in
// input id order as .npy or TSV.
package eval
