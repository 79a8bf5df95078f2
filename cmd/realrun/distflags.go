package main

import (
	"errors"
	"flag"
	"os"
	"strings"
	"time"
)

// distFlags are --trainers, --etcd, --lease, --objects (with
// --objects-endpoint and --objects-region) and --listen: a distributed
// run (realrun/dist; not in a build with -tags nodist).
type distFlags struct {
	Trainers        int
	Etcd            string
	Lease           time.Duration
	Objects         string
	ObjectsEndpoint string
	ObjectsRegion   string
	Listen          string
}

// objectsEmbedded is --objects's value for the in-memory store the
// launcher serves itself.
const objectsEmbedded = "embedded"

// objectsFlag is --objects's value: a URL or embedded, never the next
// flag (the bare --objects of before is --objects embedded).
type objectsFlag struct{ s *string }

func (f objectsFlag) String() string {
	if f.s == nil {
		return ""
	}
	return *f.s
}

func (f objectsFlag) Set(v string) error {
	if strings.HasPrefix(v, "-") {
		return errors.New("want s3://BUCKET[/PREFIX] or embedded (the bare --objects of before is --objects embedded)")
	}
	*f.s = v
	return nil
}

// selfArgv is the command line that runs this program (the tests run
// their own binary as realrun instead).
var selfArgv = func() ([]string, error) {
	exe, err := os.Executable()
	return []string{exe}, err
}

// dflagSet reports whether a flag of the distributed run was given.
func dflagSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "trainers", "etcd", "lease", "objects", "objects-endpoint", "objects-region", "listen":
			set = true
		}
	})
	return set
}
