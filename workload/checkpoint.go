package workload

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CheckpointInterval is how often to checkpoint inside an epoch: every Buckets
// buckets of the Plan, or once Every has passed since the last checkpoint
// (at the next bucket boundary). The zero CheckpointInterval never checkpoints. The
// real engine (realrun --checkpoint-every) and the simulator (simulate
// --checkpoint-every) follow the same rule: at a due boundary, training
// waits while the resident partitions trained since they were loaded (or
// last checkpointed) are written.
type CheckpointInterval struct {
	Every   time.Duration
	Buckets int
}

// ParseInterval reads --checkpoint-every: a Go duration ("30s", "5m",
// "1h30m") or a number of buckets written with a b suffix ("64b"); "" and
// "0" mean never.
func ParseInterval(s string) (CheckpointInterval, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return CheckpointInterval{}, nil
	}
	if n, ok := strings.CutSuffix(s, "b"); ok {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 || n[0] == '+' {
			return CheckpointInterval{}, fmt.Errorf("%q: want a positive whole number of buckets before the b (64b) or a duration (30s)", s)
		}
		return CheckpointInterval{Buckets: k}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return CheckpointInterval{}, fmt.Errorf("%q: want a duration (30s, 5m) or a number of buckets (64b)", s)
	}
	if d <= 0 {
		return CheckpointInterval{}, fmt.Errorf("%q: the interval must be positive", s)
	}
	return CheckpointInterval{Every: d}, nil
}

// String is the interval as ParseInterval reads it.
func (iv CheckpointInterval) String() string {
	switch {
	case iv.Buckets > 0:
		return strconv.Itoa(iv.Buckets) + "b"
	case iv.Every > 0:
		return iv.Every.String()
	}
	return "0"
}

// Due says whether a checkpoint is due after done buckets of the Plan,
// elapsed after the last one.
func (iv CheckpointInterval) Due(done int, elapsed time.Duration) bool {
	switch {
	case iv.Buckets > 0:
		return done%iv.Buckets == 0
	case iv.Every > 0:
		return elapsed >= iv.Every
	}
	return false
}

// Set implements flag.Value.
func (iv *CheckpointInterval) Set(s string) error {
	v, err := ParseInterval(s)
	if err != nil {
		return err
	}
	*iv = v
	return nil
}
