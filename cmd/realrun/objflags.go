package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/workload"
)

// modelFlags are realrun's --operator and --comparator (PyTorch-BigGraph's
// way to name a score function, instead of --model) and the objective's
// flags (--loss, --margin, --adversarial, --regularizer, --reg-coef).
type modelFlags struct {
	operator, comparator         string
	margin, adversarial, regCoef float64
}

// modelHelp is --model's help: every name it takes.
func modelHelp() string {
	var names []string
	for _, m := range workload.Models {
		names = append(names, string(m))
	}
	return "score function: " + strings.Join(names, ", ") +
		", or a PyTorch-BigGraph OPERATOR+COMPARATOR such as linear+cos (--operator, --comparator) (default: the dataset's)"
}

func (x *modelFlags) register(fs *flag.FlagSet, o *job.Options) {
	cli.EnumVar(fs, &o.Model, "model", "", modelHelp())
	cli.EnumVar(fs, &x.operator, "operator", "", "with --comparator, instead of --model: PyTorch-BigGraph's relation operator, one of "+names(workload.Operators))
	cli.EnumVar(fs, &x.comparator, "comparator", "", "with --operator: PyTorch-BigGraph's comparator, one of "+names(workload.Comparators)+" (l1: tierflow's, for TransE-L1)")
	cli.EnumVar(fs, &o.Loss, "loss", "", "loss: "+names(workload.Losses)+" (default: the model's, printed with the run)")
	fs.Float64Var(&x.margin, "margin", 0, "the ranking loss's margin, or the logistic loss's γ (the shift of a distance model's scores; 0: none) (default: the model's)")
	fs.Float64Var(&x.adversarial, "adversarial", 0, "with --loss ranking or logistic: self-adversarial negative weighting at this temperature α (RotatE, DGL-KE; 0: off) (default: the model's)")
	cli.EnumVar(fs, &o.Regularizer, "regularizer", "", "penalty on the parameters each positive edge reads: "+names(workload.Regularizers)+" (default: the model's)")
	fs.Float64Var(&x.regCoef, "reg-coef", 0, "the --regularizer's coefficient λ (0 with --regularizer none) (default: the model's)")
}

func names[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// apply puts the flags that were set into o: --operator and --comparator
// become o.Model (workload.ParseTriple), and each objective number given
// is set (a number not given takes the model's default).
func (x *modelFlags) apply(fs *flag.FlagSet, o *job.Options) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case (set["operator"] || set["comparator"]) && set["model"]:
		return cli.Usagef("--operator and --comparator name the model as PyTorch-BigGraph does, instead of --model: give one or the other")
	case set["operator"] != set["comparator"]:
		return cli.Usagef("--operator and --comparator go together (e.g. --operator translation --comparator l2)")
	case set["operator"]:
		m, err := workload.ParseTriple(x.operator, x.comparator)
		if err != nil {
			return cli.Usagef("--operator %s --comparator %s: %w", x.operator, x.comparator, err)
		}
		o.Model = string(m)
	}
	for _, f := range []struct {
		name string
		v    *float64
		dst  **float64
	}{{"margin", &x.margin, &o.Margin}, {"adversarial", &x.adversarial, &o.Adversarial}, {"reg-coef", &x.regCoef, &o.RegCoef}} {
		if set[f.name] {
			*f.dst = f.v
		}
	}
	return nil
}

// objectiveFlags are the flags of the Objective's fields.
var objectiveFlags = map[workload.ObjectiveField]string{
	workload.FieldLoss: "loss", workload.FieldMargin: "margin", workload.FieldAdversarial: "adversarial",
	workload.FieldRegularizer: "regularizer", workload.FieldRegCoef: "reg-coef",
}

// objectiveUsage turns a bad objective (a *workload.ObjectiveError) into a
// usage error naming its flag; nil for any other error.
func objectiveUsage(err error) error {
	var oe *workload.ObjectiveError
	if !errors.As(err, &oe) {
		return nil
	}
	if name, ok := objectiveFlags[oe.Field]; ok {
		return cli.Usagef("--%s: %w", name, oe.Err)
	}
	return cli.Usagef("%w", err)
}

// objectiveString says what a run minimises: "softmax loss", "ranking
// loss (margin 1), self-adversarial α 0.5, l2 regularisation λ 1e-05".
func objectiveString(ob workload.Objective) string {
	s := string(ob.LossKind()) + " loss"
	switch {
	case ob.LossKind() == workload.Ranking:
		s += fmt.Sprintf(" (margin %g)", ob.Margin)
	case ob.LossKind() == workload.Logistic && ob.Margin != 0:
		s += fmt.Sprintf(" (γ %g)", ob.Margin)
	}
	if ob.Adversarial != 0 {
		s += fmt.Sprintf(", self-adversarial α %g", ob.Adversarial)
	}
	if ob.Reg() != workload.RegNone {
		s += fmt.Sprintf(", %s regularisation λ %g", ob.Reg(), ob.RegCoef)
	}
	return s
}
