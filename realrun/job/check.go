package job

// The checks of the options Configure makes before it builds anything.

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/eval"
)

// checkNumbers checks the options that are numbers or names with a fixed
// set of values.
func checkNumbers(o Options) error {
	if err := orderings.CheckPC(o.P, o.C); err != nil {
		return inputerr.Errorf("{P} %d {C} %d: %w", o.P, o.C, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Dim", o.Dim}, {"Epochs", o.Epochs}, {"Batch", o.Batch}, {"Negatives", o.Negatives}, {"Workers", o.Workers}} {
		if f.v < 1 {
			return inputerr.Errorf("%s %d: must be at least 1", inputerr.Field(f.name), f.v)
		}
	}
	switch {
	case o.Chunk < 0:
		return inputerr.Errorf("{Chunk} %d: must not be negative", o.Chunk)
	case o.DegreeFrac != Auto && !(o.DegreeFrac >= 0 && o.DegreeFrac <= 1):
		return inputerr.Errorf("{DegreeFrac} %v: want a share between 0 and 1", o.DegreeFrac)
	case o.LR != 0 && !(o.LR > 0):
		return inputerr.Errorf("{LR} %v: must be positive", o.LR)
	case o.ExportFormat != "" && !slices.Contains(eval.ExportFormats, strings.ToLower(o.ExportFormat)):
		return inputerr.Errorf("{ExportFormat} %q: want %s", o.ExportFormat, eval.FormatList())
	case o.Edges == "" && (o.Valid != "" || o.Test != ""):
		return inputerr.Errorf("{Valid} and {Test} go with {Edges}")
	case o.Eval != "every" && o.Eval != "end" && o.Eval != eval.None:
		return inputerr.Errorf("{Eval} %q: want every, end or none", o.Eval)
	case o.EvalEvery < 1:
		return inputerr.Errorf("{EvalEvery} %d: must be at least 1", o.EvalEvery)
	case o.EvalEdges < 1:
		return inputerr.Errorf("{EvalEdges} %d: must be at least 1", o.EvalEdges)
	case o.KeepCheckpoints < 1:
		return inputerr.Errorf("{KeepCheckpoints} %d: must be at least 1", o.KeepCheckpoints)
	case o.Repeats < 1:
		return inputerr.Errorf("{Repeats} %d: must be at least 1", o.Repeats)
	}
	if _, err := realrun.ParseDuplicates(o.Duplicates); err != nil {
		return inputerr.Errorf("{Duplicates}: %w", err)
	}
	if _, err := eval.ParseProtocol(o.EvalProtocol); err != nil {
		return inputerr.Errorf("{EvalProtocol} %w", err)
	}
	return nil
}

// checkSchema refuses entity types (Options.Schema) where they are not
// supported yet: with a generated dataset, the CUDA engine, the batch
// step (micro-batches) or several trainers, and a schema of unpartitioned
// types only (the out-of-core engine needs p ≥ 2).
func checkSchema(o Options) error {
	if o.Schema == nil {
		return nil
	}
	switch {
	case o.Edges == "":
		return inputerr.Errorf("{Schema}: entity types go with {Edges} (a generated {Dataset} has none)")
	case o.Engine == "cuda":
		return inputerr.Errorf("{Schema}: entity types are trained by the CPU engine only for now (not {Engine} cuda)")
	case o.MicroBatches > 0 || o.MicroBatchMemory != "":
		return inputerr.Errorf("{Schema}: entity types are trained with the chunk step only for now (not {MicroBatches} or {MicroBatchMemory})")
	case o.Distributed:
		return inputerr.Errorf("{Schema}: entity types are trained by one trainer only for now (not {Distributed})")
	case o.Schema.P() < 2:
		return inputerr.Errorf("{Schema}: every entity type is unpartitioned (p = 1), but the out-of-core engine needs p ≥ 2: give a type {partitions: 2} or more")
	}
	return nil
}

// checkInput checks how the edge files are to be read (--delimiter,
// --header, --columns, --unseen), which goes with --edges only.
func checkInput(o Options) error {
	if err := o.Input.Check(); err != nil {
		return &inputerr.Error{Err: err}
	}
	if flags := o.Input.NonDefault(); o.Edges == "" && len(flags) > 0 {
		return inputerr.Errorf("%s: goes with {Edges}", strings.Join(slices.Sorted(maps.Keys(flags)), ", "))
	}
	return nil
}

// checkExport checks, before any work, that --export can be written and
// that its extension, if it names a format, is --export-format's.
func checkExport(o Options) (string, error) {
	if o.Export == "" {
		return "", nil
	}
	format, err := ExportFormatOf(o.Export, o.ExportFormat, "Export", "ExportFormat")
	if err != nil {
		return "", err
	}
	if format == "pbg" {
		// A model PBG cannot express is refused first (a bad name is
		// --model's to report); the datasets' defaults all have a form.
		if m, err := workload.ParseModel(o.Model); err == nil && o.Model != "" {
			if err := checkPBGForm(m); err != nil {
				return "", err
			}
		}
		return format, checkExportPBG(o.Export)
	}
	if err := atomicfile.CheckWritable(o.Export); err != nil {
		return "", inputerr.Errorf("{Export}: %w", err)
	}
	return format, nil
}

// ExportFormatOf is the format an export to path is written in
// (eval.ExportFormat: format when given, else the one path's extension
// names), its refusals bad input naming the fields that gave path and
// format (pathField and formatField: "Export", "ExportFormat").
func ExportFormatOf(path, format, pathField, formatField string) (string, error) {
	f, err := eval.ExportFormat(path, format)
	var fe *eval.FormatError
	if !errors.As(err, &fe) {
		return f, err
	}
	pf, ff := inputerr.Field(pathField), inputerr.Field(formatField)
	switch {
	case fe.Unknown:
		return "", inputerr.Errorf("%s %q: want %s", ff, fe.Format, eval.FormatList())
	case fe.Want != "":
		return "", inputerr.Errorf("%s %s: a %s file, but %s is %s (%s %s writes it)", pf, path, fe.Ext, ff, fe.Format, ff, fe.Want)
	case fe.Ext == "":
		return "", inputerr.Errorf("%s %s: no extension to tell the format by (%s); name the file so, or give %s %s", pf, path, eval.ExtList(), ff, eval.FormatList())
	}
	return "", inputerr.Errorf("%s %s: cannot tell the format from the extension %q (%s); name the file so, or give %s %s", pf, path, fe.Ext, eval.ExtList(), ff, eval.FormatList())
}

// checkEngine checks --engine, --buffer and what the engine supports.
func checkEngine(o Options) error {
	if o.TF32 && o.FP32 {
		return inputerr.Errorf("{TF32} and {FP32}: choose one (TF32 is the CUDA engine's default)")
	}
	if o.TF32 && o.Engine != "cuda" {
		return inputerr.Errorf("{TF32}: goes with {Engine} cuda (the cpu engine computes in FP32)")
	}
	if o.FP32 && o.Engine != "cuda" {
		return inputerr.Errorf("{FP32}: goes with {Engine} cuda (the cpu engine always computes in FP32)")
	}
	if err := realrun.CheckEngine(o.Engine, o.Buffer); err != nil {
		return &inputerr.Error{Err: err}
	}
	if o.Engine == "cuda" && o.Buffer != realrun.BufferHost && o.CheckpointEvery != (workload.CheckpointInterval{}) && !o.Distributed {
		return inputerr.Errorf("{CheckpointEvery}: not supported with {Engine} cuda {Buffer} gpu yet (the partitions live on the GPU between buckets); use {Buffer} host or epoch checkpoints")
	}
	return nil
}
