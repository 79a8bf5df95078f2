package search

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// ReadPlans reads the entries of a cyclic or split table file (src, as
// FormatCyclic or FormatSplit write it): SplitTable keeps them.
func ReadPlans(src []byte) (map[[2]int]cyclic.Plan, error) {
	out := map[[2]int]cyclic.Plan{}
	err := readTable(src, func(pc [2]int, v ast.Expr) error {
		lit, ok := v.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 3 {
			return fmt.Errorf("%v: want {N, Pins, Blocks}", pc)
		}
		var pl cyclic.Plan
		var err error
		if pl.N, err = intLit(lit.Elts[0]); err != nil {
			return err
		}
		if pl.Pins, err = intSlice(lit.Elts[1]); err != nil {
			return err
		}
		blocks, ok := lit.Elts[2].(*ast.CompositeLit)
		if !ok {
			return fmt.Errorf("%v: blocks: want a composite literal", pc)
		}
		pl.Blocks = make([][]int, 0, len(blocks.Elts))
		for _, e := range blocks.Elts {
			blk, err := intSlice(e)
			if err != nil {
				return err
			}
			pl.Blocks = append(pl.Blocks, blk)
		}
		out[pc] = pl
		return nil
	})
	return out, err
}

// readTable parses a table file, the map literal of its one variable,
// and passes each entry's key and value to f.
func readTable(src []byte, f func(pc [2]int, v ast.Expr) error) error {
	file, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return err
	}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR || len(gd.Specs) != 1 {
			continue
		}
		vs := gd.Specs[0].(*ast.ValueSpec)
		if len(vs.Values) != 1 {
			continue
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				return fmt.Errorf("table entry without a key")
			}
			key, err := intSlice(kv.Key)
			if err != nil {
				return err
			}
			if len(key) != 2 {
				return fmt.Errorf("table key %v: want {p, c}", key)
			}
			if err := f([2]int{key[0], key[1]}, kv.Value); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("no table variable")
}

// intLit evaluates an integer literal.
func intLit(e ast.Expr) (int, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, fmt.Errorf("want an integer, got %T", e)
	}
	return strconv.Atoi(lit.Value)
}

// intSlice evaluates a composite literal of integers, or []int(nil).
func intSlice(e ast.Expr) ([]int, error) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == "nil" {
			return nil, nil
		}
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("want a list of integers, got %T", e)
	}
	out := make([]int, 0, len(lit.Elts))
	for _, x := range lit.Elts {
		v, err := intLit(x)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
