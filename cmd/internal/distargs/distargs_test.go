package distargs

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun/dist"
)

// A trainer's command line names the endpoints, TLS files and user, but
// never the password: that goes in its environment, or stays in a file.
func TestTrainer(t *testing.T) {
	base := dist.TrainerJoin{ID: 2, Store: "/s", Prefix: "/tierflow/x/1", Lease: 5 * time.Second}
	for _, tc := range []struct {
		name     string
		etcd     dist.EtcdClient
		file     string
		wantArgs string
		wantEnv  []string
	}{
		{"plain", dist.EtcdClient{Endpoints: []string{"http://a:2379", "http://b:2379"}}, "",
			"trainer --etcd http://a:2379,http://b:2379 --store /s --run /tierflow/x/1 --id 2 --lease 5s", nil},
		{"TLS and a user", dist.EtcdClient{Endpoints: []string{"https://a:2379"}, CACert: "ca.pem", Cert: "c.pem", Key: "k.pem", User: "u", Password: "pw-secret"}, "",
			"trainer --etcd https://a:2379 --etcd-cacert ca.pem --etcd-cert c.pem --etcd-key k.pem --etcd-user u --store /s --run /tierflow/x/1 --id 2 --lease 5s", []string{PasswordEnv + "=pw-secret"}},
		{"the run's own etcd", dist.EtcdClient{Endpoints: []string{"http://a:2379"}, User: "root", Password: "pw-secret"}, "/s/dist/etcd-password",
			"trainer --etcd http://a:2379 --etcd-user root --etcd-password-file /s/dist/etcd-password --store /s --run /tierflow/x/1 --id 2 --lease 5s", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := base
			j.Etcd, j.PasswordFile = tc.etcd, tc.file
			args, env := Trainer(j)
			assert.Equal(t, tc.wantArgs, strings.Join(args, " "))
			assert.Equal(t, tc.wantEnv, env)
			assert.NotContains(t, strings.Join(args, " "), "pw-secret")
		})
	}
	j := base
	j.Store = ""
	args, _ := Trainer(j)
	assert.NotContains(t, args, "--store", "a run through an object store: the trainer needs no work directory")
	j = base
	j.ID = -1
	args, _ = Trainer(j)
	assert.Contains(t, strings.Join(args, " "), "--id N", "the line printed for trainers elsewhere")
}
