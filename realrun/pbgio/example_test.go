package pbgio_test

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/workload"
)

// A ComplEx relation row is d/2 real parts then d/2 imaginary parts; PBG's
// rhs complex_diagonal operator holds them as "real" and "imag", the
// imaginary parts negated so that PBG scores edges as tierflow does.
func ExampleRelationParams() {
	rel := []float32{1, 2, 0.5, -0.25} // one relation, d = 4
	params, _ := pbgio.RelationParams(workload.ComplEx, rel, 1, 4)
	for _, p := range params {
		fmt.Printf("model/%s %v (%s)\n", p.Name, p.Data, p.Key)
	}
	fmt.Println(pbgio.EmbeddingsFile(pbgio.Entity, 0, 3), pbgio.ModelFile(3))
	// Output:
	// model/relations/0/operator/rhs/real [1 2] (rhs_operators.0.real)
	// model/relations/0/operator/rhs/imag [-0.5 0.25] (rhs_operators.0.imag)
	// embeddings_node_0.v3.h5 model.v3.h5
}
