package gnn

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// Models are the model names Options.Model takes (nn.Models).
var Models = nn.Models

// MaxLayers is the most layers a model may have (nn.MaxLayers).
const MaxLayers = nn.MaxLayers

// Defaults are the trainer's defaults (Options' zero fields are not
// filled from them: a caller starts from Defaults).
var Defaults = Options{
	Model: "sage-mean", Layers: 2, Hidden: 256, Heads: 4, Batch: 1024,
	Dropout: 0.5, LR: 0.003, Epochs: 10, Seed: 1, EvalEvery: 1, MicroSplit: split.REG,
}

// Options are one training run's inputs. The name of each field that a
// FieldError names is the field's lower-case name (fanouts, eval-every).
type Options struct {
	// Files are the graph's input files (data.Load); or Graph, a graph
	// already in memory (then no work directory: Workdir must be "").
	Files data.Files
	Graph *data.Graph

	// Model is one of Models; Layers, Hidden and Heads (gat) its shape.
	Model                 string
	Layers, Hidden, Heads int
	// Fanouts are the neighbours sampled per layer, in DGL's order
	// (Fanouts[0] for the input layer), each a count ≥ 0 or block.Full;
	// nil: DefaultFanouts. An mlp samples none, whatever they say.
	Fanouts []int
	// Batch is the output nodes per mini-batch.
	Batch   int
	Dropout float64
	// LR is Adam's learning rate.
	LR float64
	// Epochs is the total number of epochs (a resumed run trains up to
	// it).
	Epochs int
	// Seed seeds every random choice, one stream per purpose: the initial
	// parameters, the shuffle of the training nodes, the neighbour
	// samples and dropout (each batch's from the seed, the epoch and the
	// batch alone).
	Seed uint64
	// Workers is how many goroutines compute splits rows over (0: every
	// CPU).
	Workers int
	// EvalEvery evaluates the validation and test accuracy after every
	// EvalEvery-th epoch and the last.
	EvalEvery int

	// MicroBatches, when 2 or more, splits every batch into that many
	// micro-batches by its output nodes (a batch with fewer output nodes
	// into one per output node); 0 or 1: no split. MicroBatchMemory, when
	// positive, is a budget in bytes: each batch is split into the fewest
	// micro-batches whose largest fits it by the shape-based estimate
	// (memory.Fit, Betty §4.4.3), a batch that fits whole not at all. A
	// fixed MicroBatches of 2 or more wins over the budget, as the edge
	// engine's --micro-batches does over its --micro-batch-memory: the
	// budget is then not consulted. The micro-batches of a batch train
	// one after another with the batch's dropout, each weighted by its
	// share of the batch's output nodes, and one optimiser step follows
	// the last: the parameters are the unsplit batch's up to float
	// rounding. MicroSplit is how the output nodes are split
	// (split.Split; "": split.REG).
	MicroBatches     int
	MicroBatchMemory int64
	MicroSplit       split.Method

	// Workdir keeps the run's identity, settings and a checkpoint after
	// every epoch ("": none). Resume continues its last checkpoint;
	// Overwrite starts over on one that holds a checkpoint (without
	// either such a directory is refused).
	Workdir           string
	Resume, Overwrite bool

	// SaveBlocks, when set, is a directory that receives every epoch's
	// sampled training batches, DIR/epoch-0001.blocks … (block file
	// format, in training order).
	SaveBlocks string

	// Progress, if set, is called after every training batch.
	Progress func(Progress)
	// Loaded, if set, is called once the graph is loaded and the model
	// built, before training (the command's header line).
	Loaded func(*Result)
	// Stop, when closed, stops training at the next batch boundary: the
	// epoch under way is dropped and Train returns a *StopError.
	Stop <-chan struct{}
	// Log receives one-line notices (resuming, nothing left to train);
	// nil: none.
	Log io.Writer
}

// Progress is where training stands after a batch.
type Progress struct {
	Epoch, Epochs  int
	Batch, Batches int
	// Nodes are the output nodes trained in the epoch so far.
	Nodes int64
	// Seconds since the epoch began.
	Seconds float64
	// Loss is the epoch's mean loss so far.
	Loss           float64
	NodesPerSecond float64
	// Final: the epoch's last batch.
	Final bool
}

// FieldError is an option with a value the trainer cannot take: Field
// is the option's name in lower case (as the command's flag is named).
// Err, when set, is the error behind it (a *memory.BudgetError for a
// micro-batch-memory that no split of a batch meets).
type FieldError struct {
	Field, Value, Msg string
	Err               error
}

func (e *FieldError) Unwrap() error { return e.Err }

func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Msg
	}
	return e.Field + " " + e.Value + ": " + e.Msg
}

func fieldErr(field string, v any, format string, args ...any) error {
	return &FieldError{Field: field, Value: fmt.Sprint(v), Msg: fmt.Sprintf(format, args...)}
}

// micro reports whether o splits batches into micro-batches.
func (o Options) micro() bool { return o.MicroBatches > 1 || o.MicroBatchMemory > 0 }

// splitMethod is o.MicroSplit, split.REG when unset.
func (o Options) splitMethod() split.Method {
	if o.MicroSplit == "" {
		return split.REG
	}
	return o.MicroSplit
}

// methodNames lists split.Methods: "reg, range, random, metis".
func methodNames() string {
	names := make([]string, len(split.Methods))
	for i, m := range split.Methods {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// DefaultFanouts are the fanouts used when none are given: 10,25 at two
// layers (GraphSAGE's), 10 per layer otherwise; all 0 for mlp.
func DefaultFanouts(model string, layers int) []int {
	f := make([]int, layers)
	if model == "mlp" {
		return f
	}
	if layers == 2 {
		return []int{10, 25}
	}
	for i := range f {
		f[i] = 10
	}
	return f
}

// ParseFanouts reads a comma-separated fanout list: each item a count
// ≥ 0 or "full" (block.Full).
func ParseFanouts(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if strings.EqualFold(item, "full") {
			out = append(out, block.Full)
			continue
		}
		n, err := strconv.Atoi(item)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count of neighbours (0 or more) or full", item)
		}
		out = append(out, n)
	}
	return out, nil
}

// FormatFanouts writes fanouts as ParseFanouts reads them.
func FormatFanouts(f []int) string {
	parts := make([]string, len(f))
	for i, n := range f {
		parts[i] = strconv.Itoa(n)
		if n == block.Full {
			parts[i] = "full"
		}
	}
	return strings.Join(parts, ",")
}

// withDefaults returns o with its fanouts (and an mlp's zero fanouts)
// filled in.
func (o Options) withDefaults() Options {
	if o.Fanouts == nil || o.Model == "mlp" {
		o.Fanouts = DefaultFanouts(o.Model, o.Layers)
	}
	return o
}

// Check reports the first option that cannot be trained with (a
// *FieldError), before any input is read.
func (o Options) Check() error {
	known := false
	for _, m := range Models {
		known = known || m == o.Model
	}
	if !known {
		return fieldErr("model", o.Model, "want %s", strings.Join(Models, ", "))
	}
	switch {
	case o.Layers < 1 || o.Layers > MaxLayers:
		return fieldErr("layers", o.Layers, "want 1 to %d", MaxLayers)
	case o.Hidden < 1:
		return fieldErr("hidden", o.Hidden, "must be at least 1")
	case o.Heads < 1:
		return fieldErr("heads", o.Heads, "must be at least 1")
	case o.Model == "gat" && o.Layers > 1 && o.Hidden%o.Heads != 0:
		return fieldErr("hidden", o.Hidden, "gat splits the hidden width over the heads: want a multiple of the %d heads", o.Heads)
	case o.Batch < 1:
		return fieldErr("batch", o.Batch, "must be at least 1")
	case !(o.Dropout >= 0 && o.Dropout < 1):
		return fieldErr("dropout", o.Dropout, "want a probability in [0, 1)")
	case !(o.LR > 0):
		return fieldErr("lr", o.LR, "must be positive")
	case o.Epochs < 1:
		return fieldErr("epochs", o.Epochs, "must be at least 1")
	case o.Workers < 0:
		return fieldErr("workers", o.Workers, "must not be negative")
	case o.EvalEvery < 1:
		return fieldErr("eval-every", o.EvalEvery, "must be at least 1")
	case o.MicroBatches < 0:
		return fieldErr("micro-batches", o.MicroBatches, "must not be negative (0 or 1: no split)")
	case o.MicroBatchMemory < 0:
		return fieldErr("micro-batch-memory", o.MicroBatchMemory, "must not be negative (0: no budget)")
	case o.Graph != nil && o.Workdir != "":
		return &FieldError{Field: "workdir", Value: o.Workdir, Msg: "a work directory records its input files: train from files, not a graph in memory"}
	}
	if o.MicroSplit != "" && !slices.Contains(split.Methods, o.MicroSplit) {
		return fieldErr("micro-split", o.MicroSplit, "want %s", methodNames())
	}
	if o.Model != "mlp" && o.Fanouts != nil {
		if len(o.Fanouts) != o.Layers {
			return fieldErr("fanouts", FormatFanouts(o.Fanouts), "%d given for %d layers: want one per layer (the first for the input layer)", len(o.Fanouts), o.Layers)
		}
		for _, f := range o.Fanouts {
			if f < 0 && f != block.Full {
				return fieldErr("fanouts", FormatFanouts(o.Fanouts), "want counts of 0 or more, or full")
			}
		}
	}
	return nil
}
