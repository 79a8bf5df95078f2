// # The models
//
// A [Model] is a stack of [Spec].Layers layers; layer l reads batch block
// l's source rows and writes its destination rows. Widths: In → Hidden →
// … → Hidden → Classes (one layer: In → Classes).
//
//   - mlp: [Linear] layers, y = x·Wᵀ + b (W out×in, Glorot-uniform; b zero);
//     the features only (one layer: logistic regression).
//   - sage-mean (DGL SAGEConv "mean"): h_i = fc_self(x_i) +
//     fc_neigh(mean_{j∈N(i)} x_j), fc_neigh without bias; no neighbours:
//     mean 0. A narrowing layer (in > out) may compute it as the mean of
//     fc_neigh(x_j), as DGL does, where that is less work.
//   - sage-pool (DGL "pool"): p_j = ReLU(fc_pool(x_j)) (in→in, with
//     bias), agg_i = max_j p_j (0 with no neighbours), h_i = fc_self(x_i) +
//     fc_neigh(agg_i).
//   - sage-lstm (DGL "lstm"): the neighbours of i, in the block's order,
//     as a sequence into an LSTM of input and hidden size in (PyTorch's
//     layout and gates i, f, g, o; h0 = c0 = 0); agg_i = the last hidden
//     state (0 with no neighbours); h_i = fc_self(x_i) + fc_neigh(agg_i).
//   - gat (DGL GATConv): z = fc(x) (heads·out×in, no bias); over j ∈ N(i) ∪
//     {i}, e_ij = LeakyReLU_0.2(el_j + er_i) with el_j = Σ_f z_j[h,f]·
//     attn_l[h,f] and er_i = Σ_f z_i[h,f]·attn_r[h,f]; α = softmax_j(e_ij);
//     out_i[h] = Σ_j α_ij z_j[h] + bias[h]. Hidden layers: Heads heads of
//     Hidden/Heads features, concatenated; the last: Heads heads of
//     Classes, averaged. No attention dropout.
//
// Between layers: the activation (ReLU; ELU for gat), then, in training
// only, inverted dropout (each value zeroed with probability Dropout, the
// rest scaled by 1/(1-Dropout)); nothing after the last layer, whose
// output are the logits. The parameters are drawn from one generator
// seeded by [New]'s seed, layer by layer, and named "layers.<l>.<name>".
//
// The loss is the mean softmax cross-entropy ([CrossEntropy]); the
// optimiser [Adam] with PyTorch's algorithm and defaults. Evaluation
// ([Model.Infer]) is layer-wise inference over every node with every
// neighbour, in evaluation mode; the node representation it returns is
// the last layer's input.
package nn
