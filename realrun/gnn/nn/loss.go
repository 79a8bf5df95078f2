package nn

import (
	"fmt"
	"math"
)

// CrossEntropy returns the mean softmax cross-entropy of logits (n×classes,
// row-major) against labels (n class ids in [0, classes)) and the number
// of rows whose prediction — the highest logit, the lowest class on ties —
// is the label; when dLogits is not nil (n×classes) it writes into it the
// gradient of the mean loss with respect to logits. The log-softmax is
// computed stably (shifted by the row's maximum) in float64. With no rows
// the loss is 0.
func CrossEntropy(logits []float32, labels []int32, classes int, dLogits []float32) (loss float64, correct int) {
	n := len(labels)
	if len(logits) != n*classes || (dLogits != nil && len(dLogits) != n*classes) {
		panic(fmt.Sprintf("nn.CrossEntropy: %d logits and %d gradients for %d rows of %d classes", len(logits), len(dLogits), n, classes))
	}
	if n == 0 {
		return 0, 0
	}
	inv := 1 / float64(n)
	for i, y := range labels {
		if y < 0 || int(y) >= classes {
			panic(fmt.Sprintf("nn.CrossEntropy: row %d has label %d, want 0–%d", i, y, classes-1))
		}
		row := logits[i*classes : (i+1)*classes]
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		if best == int(y) {
			correct++
		}
		mx := float64(row[best])
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(sum)
		loss += lse - float64(row[y])
		if dLogits != nil {
			d := dLogits[i*classes : (i+1)*classes]
			for c, v := range row {
				d[c] = float32(math.Exp(float64(v)-lse) * inv)
			}
			d[y] -= float32(inv)
		}
	}
	return loss * inv, correct
}
