// Package data holds a node-classification graph — adjacency, node
// features, labels and the train/valid/test splits — read from a user's
// files or generated with the shape of Betty's datasets.
package data

// Graph is a node-classification graph in memory. Node ids are dense,
// 0 … N-1, in the order of Names.
type Graph struct {
	// Names are the nodes' names, indexed by id.
	Names []string
	// Ptr and Nbr are the neighbours in CSR form: the neighbours of node
	// v are Nbr[Ptr[v]:Ptr[v+1]], ascending, without duplicates or v
	// itself. Messages flow along every edge of the input in both
	// directions unless the graph was read as directed, when Nbr lists
	// the sources of v's in-edges.
	Ptr []int64
	Nbr []int32
	// F is the feature width; X holds N×F float32 features, row-major.
	F int
	X []float32
	// Classes are the label names, indexed by class id; Y[v] is v's class
	// id, or -1 when v has no label.
	Classes []string
	Y       []int32
	// Train, Valid and Test are node ids, each labelled, disjoint, in the
	// order their files listed them.
	Train, Valid, Test []int32
}

// N returns the number of nodes.
func (g *Graph) N() int { return len(g.Names) }

// Neighbors returns the neighbours of v (a view into Nbr; do not modify).
func (g *Graph) Neighbors(v int32) []int32 { return g.Nbr[g.Ptr[v]:g.Ptr[v+1]] }

// Edges returns the number of neighbour entries (each undirected edge
// counts twice).
func (g *Graph) Edges() int64 { return int64(len(g.Nbr)) }

// Row returns node v's features (a view into X).
func (g *Graph) Row(v int32) []float32 { return g.X[int(v)*g.F : int(v+1)*g.F] }
