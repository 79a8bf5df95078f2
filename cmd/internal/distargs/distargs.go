// Package distargs is realrun's command lines for the processes of a
// distributed run: a trainer (realrun trainer) and an etcd member
// (realrun etcd-member), with the flags those commands take. The
// password of an etcd user never goes on a command line: a trainer gets
// it in its environment (PasswordEnv) or from a file.
package distargs

import (
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/realrun/dist"
)

// PasswordEnv is the environment variable realrun reads an etcd user's
// password from.
const PasswordEnv = "TIERFLOW_ETCD_PASSWORD"

// Trainer is the arguments after realrun that run trainer j, and what
// to add to its environment.
func Trainer(j dist.TrainerJoin) (args, env []string) {
	id := "N"
	if j.ID >= 0 {
		id = strconv.Itoa(j.ID)
	}
	args = []string{"trainer", "--etcd", strings.Join(j.Etcd.Endpoints, ",")}
	for _, f := range []struct{ flag, v string }{{"--etcd-cacert", j.Etcd.CACert}, {"--etcd-cert", j.Etcd.Cert}, {"--etcd-key", j.Etcd.Key}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	if j.Etcd.User != "" {
		args = append(args, "--etcd-user", j.Etcd.User)
		if j.PasswordFile != "" {
			args = append(args, "--etcd-password-file", j.PasswordFile)
		} else {
			env = append(env, PasswordEnv+"="+j.Etcd.Password)
		}
	}
	if j.Store != "" { // a run through an object store needs none
		args = append(args, "--store", j.Store)
	}
	args = append(args, "--run", j.Prefix, "--id", id, "--lease", j.Lease.String())
	return args, env
}

// Member is the arguments after realrun that run etcd member m.
func Member(m dist.Member) []string {
	return []string{"etcd-member", "--name", m.Name, "--data-dir", m.Dir, "--listen-client", m.Client, "--listen-peer", m.Peer, "--initial-cluster", m.Cluster}
}
