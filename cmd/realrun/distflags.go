package main

import (
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"time"
)

// distFlags are --trainers, --etcd and its TLS and credentials,
// --etcd-members, --lease, --objects (with --objects-endpoint and
// --objects-region) and --listen: a distributed run (realrun/dist; not
// in a build with -tags nodist).
type distFlags struct {
	Trainers        int
	Etcd            etcdFlags
	Members         int
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

// etcdFlags are how realrun and realrun trainer reach an existing etcd
// cluster, named as etcdctl names them: --etcd ENDPOINTS, --etcd-cacert,
// --etcd-cert, --etcd-key, --etcd-user USER[:PASSWORD] and
// --etcd-password-file (or the password in $TIERFLOW_ETCD_PASSWORD).
type etcdFlags struct {
	Endpoints, CACert, Cert, Key, User, PasswordFile string
}

// etcdFlagNames are the flags of etcdFlags.
var etcdFlagNames = []string{"etcd", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-user", "etcd-password-file"}

// register adds the flags to fs; what says what the endpoints are.
func (e *etcdFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&e.Endpoints, "etcd", "", what)
	fs.StringVar(&e.CACert, "etcd-cacert", "", "with --etcd: verify the members' certificates with this CA `FILE` (PEM; https:// endpoints)")
	fs.StringVar(&e.Cert, "etcd-cert", "", "with --etcd: this client's certificate `FILE` (PEM), for a cluster that asks for one (with --etcd-key)")
	fs.StringVar(&e.Key, "etcd-key", "", "with --etcd: the key `FILE` of --etcd-cert (PEM)")
	fs.StringVar(&e.User, "etcd-user", "", "with --etcd: authenticate as `USER[:PASSWORD]`; without :PASSWORD the password is read from --etcd-password-file or $TIERFLOW_ETCD_PASSWORD (a password on the command line is visible to every user of the machine)")
	fs.StringVar(&e.PasswordFile, "etcd-password-file", "", "with --etcd-user: read the password from `FILE` (its first line)")
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
		case "trainers", "etcd-members", "lease", "objects", "objects-endpoint", "objects-region", "listen":
			set = true
		}
		if slices.Contains(etcdFlagNames, f.Name) {
			set = true
		}
	})
	return set
}
