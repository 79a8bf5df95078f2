package job

import (
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
)

// EvalProgress follows an evaluation after epoch (0 outside training) of
// split ("valid" or "test"): phase and its done of total steps
// (eval.Options.Progress).
type EvalProgress func(epoch int, split, phase string, done, total int)

// evalOptions are the evaluation options of a run's Options.
func evalOptions(o Options, cfg Config) (eval.Options, error) {
	ev := eval.DefaultEval
	ev.Seed, ev.Workers, ev.MaxEdges, ev.Stop = cfg.Spec.Seed, cfg.Hyper.Workers, o.EvalEdges, o.Stop
	var err error
	if ev.Protocol, err = eval.ParseProtocol(o.EvalProtocol); err != nil {
		return ev, inputerr.Errorf("{EvalProtocol} %w", err)
	}
	ev.Memory, err = ParseEvalMemory(o.EvalMemory)
	return ev, err
}

// ParseEvalMemory reads Options.EvalMemory or EvalDirOptions.EvalMemory
// ("": 0, eval.DefaultMemory).
func ParseEvalMemory(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := devices.ParseBytes(s)
	if err != nil {
		return 0, inputerr.Errorf("{EvalMemory}: %w", err)
	}
	if b <= 0 {
		return 0, inputerr.Errorf("{EvalMemory} %s: must be positive", s)
	}
	return int64(b), nil
}

// evalSplits are the splits evaluated after epoch e of a run: with --eval
// every, after every --eval-every-th epoch and the last, the validation
// split when the work directory has one (else the test split); after
// the last epoch (--eval every or end), the test split.
func evalSplits(o Options, e int, hasValid bool) []store.Split {
	last := e == o.Epochs
	var out []store.Split
	if o.Eval == "every" && (e%o.EvalEvery == 0 || last) && (hasValid || !last) {
		if hasValid {
			out = append(out, store.Valid)
		} else {
			out = append(out, store.Test)
		}
	}
	if last && o.Eval != eval.None {
		out = append(out, store.Test)
	}
	return out
}
