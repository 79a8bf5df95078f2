// Package block samples a GNN mini-batch as a stack of bipartite blocks
// (Betty, Figure 7): for each layer, the destination nodes, the source
// nodes they read, and the sampled edges between them.
package block

// Block is one layer's bipartite graph. Its source rows are the nodes
// Src (global ids); the first NumDst of them are the destination nodes,
// in the same order (so a layer can read a destination's own row as
// source row i). The sampled in-neighbours of destination i are the
// source rows Nbr[Ptr[i]:Ptr[i+1]] (local indices into Src); a
// destination is never listed as its own neighbour.
type Block struct {
	Src    []int32
	NumDst int
	Ptr    []int32
	Nbr    []int32
}

// NumSrc returns the number of source rows.
func (b *Block) NumSrc() int { return len(b.Src) }

// Batch is one mini-batch: Blocks[0] reads the input features of
// Blocks[0].Src, and layer l maps Blocks[l]'s source rows to its
// destination rows; Blocks[l].Src[:Blocks[l].NumDst] equals
// Blocks[l+1].Src, in order. The output nodes are
// Blocks[len-1].Src[:NumDst]. A features-only model (mlp) uses blocks
// without edges, whose sources are their destinations.
type Batch struct {
	Blocks []Block
}

// Output returns the batch's output nodes (a view).
func (b *Batch) Output() []int32 {
	last := &b.Blocks[len(b.Blocks)-1]
	return last.Src[:last.NumDst]
}

// Input returns the nodes whose features the batch reads (a view).
func (b *Batch) Input() []int32 { return b.Blocks[0].Src }
