// Command useritem writes a two-type user–item graph with planted
// communities (internal/useritem), realrun's typed input:
//
//	useritem [--users N] [--items M] [--communities K] [--p P] [--seed S] [--no-similar] OUTDIR
//
// writes OUTDIR/train.tsv, valid.tsv, test.tsv (src<TAB>rel<TAB>dst; users
// u0…, items i0…) and OUTDIR/schema.yaml (users in P partitions, items
// unpartitioned; relations bought user→item, follows user→user and
// similar item→item), then trains with
//
//	realrun --edges OUTDIR/train.tsv --valid OUTDIR/valid.tsv --test OUTDIR/test.tsv --schema OUTDIR/schema.yaml
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tierflow/tierflow/internal/useritem"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "useritem:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	d := useritem.Default
	fs := flag.NewFlagSet("useritem", flag.ContinueOnError)
	users := fs.Int("users", d.Users, "users")
	items := fs.Int("items", d.Items, "items")
	comms := fs.Int("communities", d.Communities, "latent communities")
	p := fs.Int("p", d.P, "partitions of the user type in schema.yaml (items are unpartitioned)")
	bought := fs.Float64("bought", d.BoughtPerUser, "mean purchases a user")
	follows := fs.Float64("follows", d.FollowsPerUser, "mean follows a user")
	similar := fs.Float64("similar", d.SimilarPerItem, "mean similar items an item")
	noSimilar := fs.Bool("no-similar", false, "leave the similar relation (item→item) out")
	valid := fs.Int("valid", d.Valid, "validation edges")
	test := fs.Int("test", d.Test, "test edges")
	seed := fs.Uint64("seed", d.Seed, "seed")
	// Flags may follow OUTDIR too.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: useritem [--users N] [--items M] [--communities K] [--p P] [--seed S] [--no-similar] OUTDIR")
	}
	c := useritem.Config{Users: *users, Items: *items, Communities: *comms, P: *p,
		BoughtPerUser: *bought, FollowsPerUser: *follows, SimilarPerItem: *similar,
		Own: d.Own, Second: d.Second, Zipf: d.Zipf, Valid: *valid, Test: *test, Seed: *seed}
	if *noSimilar {
		c.SimilarPerItem = -1
	}
	g, err := useritem.Generate(c)
	if err != nil {
		return err
	}
	if err := g.Write(pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "useritem: %s in %s\n", g.Summary(), pos[0])
	return nil
}
