//go:build !amd64 || purego

package nn

func sigmoidY(x *float32, n int)        { panic("unreachable") }
func tanhY(x, y *float32, n int)        { panic("unreachable") }
func vecAct() bool                      { return false }
func dotY(x, y *float32, n int) float32 { panic("unreachable") }

func lstmCellBackY(gt, tc, cp, dh, dc, dgt *float32, h, n int) { panic("unreachable") }
