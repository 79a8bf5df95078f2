//go:build !cuda

package cuda

// srcGPU runs the CUDA C kernels themselves on the CPU: kernels/train.cu
// compiled as C++ with kernels/cpu/cuda_cpu.h (the CUDA built-ins) and
// kernels/cpu/launch.cc (runs a kernel over its grid, blocks in turn, the
// threads of a block with barriers as fibers), loaded with purego, on the
// emulator's memory, whose device addresses are real addresses. Where no
// C++ compiler is found the tests fall back to the Go transcription
// (emu.go) and the tests of the source itself skip.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/cuda/kernels"
)

// kernelLib is a kernel source compiled for the CPU and loaded.
type kernelLib struct {
	cxx    string // the compiler, as found
	launch func(name string, gx, gy, gz, bx, by int32, params *uint64, nparams int32, err *byte, errlen int32) int32
}

// findCXX is the C++ compiler: $CXX (program and flags), else the first of
// g++, c++, clang++ on the PATH.
func findCXX() ([]string, error) {
	if f := strings.Fields(os.Getenv("CXX")); len(f) > 0 {
		p, err := exec.LookPath(f[0])
		if err != nil {
			return nil, fmt.Errorf("no C++ compiler: $CXX=%q: %w", os.Getenv("CXX"), err)
		}
		return append([]string{p}, f[1:]...), nil
	}
	for _, c := range []string{"g++", "c++", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			return []string{p}, nil
		}
	}
	return nil, errors.New("no C++ compiler found ($CXX, g++, c++, clang++)")
}

var globalRe = regexp.MustCompile(`__global__\s+void\s+(\w+)\s*\(`)

// kernelList is the runner's kernels.inc for src: K(name, barriers) for
// every __global__ function, barriers 1 when its body uses __syncthreads,
// __syncwarp or a warp shuffle, or calls a helper that does (warp_sum,
// warp_max, edgeBack, rowLoss) (the threads of its blocks then run as
// fibers).
func kernelList(src string) (string, error) {
	var b strings.Builder
	found := map[string]bool{}
	for _, m := range globalRe.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		open := strings.IndexByte(src[m[1]:], '{')
		if open < 0 {
			return "", fmt.Errorf("kernel %s has no body", name)
		}
		body, depth := "", 0
		for i := m[1] + open; i < len(src); i++ {
			if src[i] == '{' {
				depth++
			} else if src[i] == '}' {
				if depth--; depth == 0 {
					body = src[m[1]+open : i+1]
					break
				}
			}
		}
		if body == "" {
			return "", fmt.Errorf("kernel %s: unbalanced braces", name)
		}
		barriers := 0
		if strings.Contains(body, "__syncthreads") || strings.Contains(body, "__shfl") || strings.Contains(body, "__syncwarp") ||
			strings.Contains(body, "warp_") || strings.Contains(body, "Back(") || strings.Contains(body, "rowLoss(") {
			barriers = 1
		}
		found[name] = true
		fmt.Fprintf(&b, "K(%s, %d)\n", name, barriers)
	}
	for _, k := range kernels.Train {
		if !found[k] {
			return "", fmt.Errorf("kernel %s of kernels.Train is not in the source", k)
		}
	}
	return b.String(), nil
}

// buildKernelLib compiles src (the text of a .cu file) with the runner
// into a shared library in a temporary directory and loads it.
func buildKernelLib(src string) (*kernelLib, error) {
	cxx, err := findCXX()
	if err != nil {
		return nil, err
	}
	list, err := kernelList(src)
	if err != nil {
		return nil, err
	}
	cpu, err := filepath.Abs(filepath.Join("kernels", "cpu"))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tierflow-kernels-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // the loaded library stays mapped
	unit := fmt.Sprintf("#include \"train.cu\"\n#include %q\n", filepath.Join(cpu, "launch.cc"))
	for name, text := range map[string]string{"train.cu": src, "kernels.inc": list, "unit.cc": unit} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	lib := filepath.Join(dir, "libtrain.so")
	args := append(cxx[1:], "-std=c++17", "-O2", "-shared", "-fPIC", "-Wall", "-Werror=return-type", "-U_FORTIFY_SOURCE",
		"-include", filepath.Join(cpu, "cuda_cpu.h"), "-I", dir, "-x", "c++", filepath.Join(dir, "unit.cc"), "-o", lib)
	cmd := exec.Command(cxx[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("loading the kernels compiled with %s: %w", cxx[0], err)
	}
	l := &kernelLib{cxx: filepath.Base(cxx[0])}
	if err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("tf_launch: %v", r)
			}
		}()
		purego.RegisterLibFunc(&l.launch, h, "tf_launch")
		return nil
	}(); err != nil {
		return nil, err
	}
	return l, nil
}

var (
	srcOnce sync.Once
	srcLib  *kernelLib
	srcErr  error
	noCXX   error // no C++ compiler (or no source): the tests use the Go transcription
)

// sourceKernels is train.cu compiled once per test binary; lib is nil
// when there is no C++ compiler or no source (noCXX says so), and err
// says why a compiler there failed (the tests then fail: a source that does not
// compile must not pass on the Go transcription).
func sourceKernels() (lib *kernelLib, err error) {
	srcOnce.Do(func() {
		if _, noCXX = findCXX(); noCXX != nil {
			fmt.Printf("kernels: Go transcription (%v)\n", noCXX)
			return
		}
		// A test binary run away from its source (the GPU bundle) has
		// none to compile.
		src, err := os.ReadFile(filepath.Join("kernels", "train.cu"))
		if err == nil {
			_, err = os.Stat(filepath.Join("kernels", "cpu", "launch.cc"))
		}
		if err != nil {
			noCXX = fmt.Errorf("kernel source not found: %w", err)
			fmt.Printf("kernels: Go transcription (%v)\n", noCXX)
			return
		}
		srcLib, srcErr = buildKernelLib(string(src))
		if srcErr == nil {
			fmt.Printf("kernels: train.cu compiled with %s and run on the CPU\n", srcLib.cxx)
		}
	})
	return srcLib, srcErr
}

// srcGPU is the emulator (memory, copies, events) launching the compiled
// kernel source.
type srcGPU struct {
	*emuGPU
	lib *kernelLib
}

func newSrcGPU(lib *kernelLib) *srcGPU { return &srcGPU{emuGPU: newEmu(), lib: lib} }

func (g *srcGPU) launch(s stream, name string, grid [3]int, block [2]int, params []uint64) error {
	if p := append([]uint64(nil), params...); g.recording(func() error { return g.launch(s, name, grid, block, p) }) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var msg [512]byte
	var p *uint64
	if len(params) > 0 {
		p = &params[0]
	}
	rc := g.lib.launch(name, int32(grid[0]), int32(grid[1]), int32(grid[2]), int32(block[0]), int32(block[1]),
		p, int32(len(params)), &msg[0], int32(len(msg)))
	runtime.KeepAlive(params)
	if rc != 0 {
		s, _, _ := bytes.Cut(msg[:], []byte{0})
		return fmt.Errorf("%s (train.cu on the CPU): %s", name, s)
	}
	return g.guardsIntact(name)
}

// guardsIntact says which allocation a launch wrote past the end of.
func (g *emuGPU) guardsIntact(name string) error {
	for _, p := range g.bases {
		b := g.mem[p]
		full := b[:cap(b)]
		guard := unsafe.Slice((*uint32)(unsafe.Pointer(&full[len(b)])), guardBytes/4)
		for i, w := range guard {
			if w != guardWord {
				return fmt.Errorf("%s wrote past the end of the %d-byte allocation at %#x (float %d after it: %#x)",
					name, len(b), uint64(p), i, w)
			}
		}
	}
	return nil
}

// TestKernelSourceCatchesPlantedBugs plants bugs in copies of train.cu
// (each replacement must occur exactly once in the source), compiles each
// copy for the CPU and requires the kernel checks (checkKernels over
// kernelCases and modelCases, checkEachKernels over eachCases) to fail on it, and to pass on the source as
// it is.
func TestKernelSourceCatchesPlantedBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles train.cu once per planted bug")
	}
	lib, err := sourceKernels()
	require.NoError(t, err)
	if lib == nil {
		t.Skipf("kernel source not checked: %v", noCXX)
	}
	raw, err := os.ReadFile(filepath.Join("kernels", "train.cu"))
	require.NoError(t, err)
	src := string(raw)
	mutations := []struct{ name, old, new string }{
		{"chunk_prep pads one edge too few",
			"if (i >= ci[0]) {\n\t\tfor (int x = lane; x < d; x += 32) q1[x] = q2[x] = 0;",
			"if (i > ci[0]) {\n\t\tfor (int x = lane; x < d; x += 32) q1[x] = q2[x] = 0;"},
		{"chunk_prep takes the source from the destination table",
			"const float *s = P->embA + (long long)ci[i] * d, *t = P->embB + (long long)ci[nc + i] * d;\n\tif (model > 2) {",
			"const float *s = P->embB + (long long)ci[i] * d, *t = P->embB + (long long)ci[nc + i] * d;\n\tif (model > 2) {"},
		{"chunk_prep ComplEx source query with the wrong sign", "bi = c * v - e * u;     // q2 = (Re", "bi = c * v + e * u;     // q2 = (Re"},
		{"chunk_prep leaves the relation count", "if (reset && blockIdx.x == 0 && threadIdx.x < 3)", "if (reset && blockIdx.x == 0 && threadIdx.x < 2)"},
		{"sgemm_batched reads one k past K", "ka < K", "ka <= K"},
		{"chunk_softmax sum skips the last shuffle", "for (int o = 16; o > 0; o /= 2) z +=", "for (int o = 16; o > 1; o /= 2) z +="},
		{"chunk_softmax scores padding rows", "if (i >= block(piece, L, c0 + j)[0]) {", "if (i >= block(piece, L, c0 + j)[0] + nc) {"},
		{"chunk_softmax barrier in one lane only (deadlock)", "\tfloat z = 0;\n", "\tfloat z = 0;\n\tif (lane == 0) __syncthreads();\n"},
		{"chunk_back adds the destination's gradient to the source", "atomicAdd(accT + x, gt);", "atomicAdd(accS + x, gt);"},
		{"chunk_back keeps two tables for one partition", "*B = same ? accs : accs + 1", "*B = accs + 1"},
		{"chunk_back negatives to the other table", "const Acc *T = ci[m + k] ? B : A;", "const Acc *T = ci[m + k] ? A : B;"},
		{"chunk_back links a destination in a source's slot", "link(B, dr, nc + i);\n\t\t\tif (model != 0)", "link(B, dr, i);\n\t\t\tif (model != 0)"},
		{"edgeBack's edge links a destination in a source's slot", "link(B, dr, nc + i);\n\t\t\t\tif (hasRel)", "link(B, dr, i);\n\t\t\t\tif (hasRel)"},
		{"touch lists a row slot off by one", "a->list[atomicAdd(count, 1)] = r;", "a->list[atomicAdd(count, 1) + 1] = r;"},
		{"adagrad_sum bound off by one", "if (t >= (long long)n * d) return;", "if (t > (long long)n * d) return;"},
		{"adagrad_each steps occurrences in reverse order", "rank += EACH_KEY(slots[f]) < ke;", "rank += EACH_KEY(slots[f]) > ke;"},
		{"adagrad_each orders an edge's destination with its source", "2 * ((s) - nc) + 1", "2 * ((s) - nc)"},
		// The other models' and objectives' kernels (modelCases).
		{"opForward translation adjoint adds", "q[j] = adj ? x[j] - r[j] : x[j] + r[j];", "q[j] = x[j] + r[j];"},
		{"opForward linear reads A transposed", "const float *a = r + (long long)j * d;\n\t\t\tfloat v = op == OP_AFFINE ? r[(long long)d * d + j] : 0.0f;\n\t\t\tfor (int k = 0; k < d; k++) v += a[k] * x[k];",
			"const float *a = r + (long long)j * d;\n\t\t\tfloat v = op == OP_AFFINE ? r[(long long)d * d + j] : 0.0f;\n\t\t\tfor (int k = 0; k < d; k++) v += r[(long long)k * d + j] * x[k];"},
		{"relCoef without the adjoint (rotate and complex_diagonal, both directions)", "\tif (adj) *ci = -*ci;\n", "\n"},
		{"a pair's destination operator is its source's", "const float *rh = MODEL_PAIR(model) ? rg + opWidth(op, d) : rg;", "const float *rh = rg;"},
		{"cos without the query's norm", "case CMP_COS: return s.dot * invNorm(s.qq) * invNorm(s.xx);", "case CMP_COS: return s.dot * invNorm(s.xx);"},
		{"normed scores without the negatives' norms", "float D = qq + nn[x] - 2 * t;", "float D = qq - 2 * t;"},
		{"l2 gradient coefficient of the query dropped", "\t\t\tGp = -n > clamped ? G / -n : 0.0f;\n\t\t\tap -= Gp;", "\t\t\tGp = -n > clamped ? G / -n : 0.0f;"},
		{"the negatives' coefficient dropped", "for (int x = lane; x < d; x += 32) gn[x] += b * nv[x];", "for (int x = lane; x < d; x += 32) gn[x] += 0 * nv[x];"},
		{"ranking gradient at the kink", "G = v > 0 ? f : 0.0f;", "G = v >= -0.5f ? f : 0.0f;"},
		{"adversarial weights not normalised", "float f = adversarial ? expf(adv * n - mx) / z : 1.0f / m;", "float f = adversarial ? expf(adv * n - mx) : 1.0f / m;"},
		{"logistic without the margin on the positive", "g = -sigmoidf(-(p + margin));", "g = -sigmoidf(-p);"},
		{"pair_scores skips the last tile's column", "for (int k = 0; k < kn; k++) {", "for (int k = 0; k + 1 < kn; k++) {"},
		{"pair_grads modulus imaginary part dropped", "if (mod) out[c + h] = sign * si;", "if (mod) out[c + h] = 0;"},
		{"l1 subgradient sign(0) = 1", "__device__ float signf(float v) { return (float)((v > 0) - (v < 0)); }", "__device__ float signf(float v) { return v >= 0 ? 1.0f : -1.0f; }"},
		{"opBack linear gradient of A transposed", "for (int k = lane; k < d; k += 32) sink(rule, row + k, gj * x[k]);", "for (int k = lane; k < d; k += 32) sink(rule, gr + (long long)k * d + j, gj * x[k]);"},
		{"opBack complex relation gradient without the adjoint's sign", "sink(rule, gr + c + h, adj ? -gci : gci);", "sink(rule, gr + c + h, gci);"},
		{"rule each's relation row not cleared", "for (long long x = lane; x < rw; x += 32) grr[x] = 0;", "for (long long x = lane; x < rw; x += 32) grr[x] += 0;"},
		{"n3 on entity rows elementwise for complex models", "int cx = complexOp(op);", "int cx = 0;"},
		{"rotate phases regularised", "} else if (hasRel && op != OP_ROTATE) {", "} else if (hasRel) {"},
		{"n3 on a pair's second complex_diagonal operator elementwise", "if (pair) P += regRow(reg, 1,", "if (pair) P += regRow(reg, 0,"},
		{"regularisation loss not counted", "if (lane == 0) atomicAdd(loss + q % 32, (double)lam * P);", "if (lane == 0) atomicAdd(loss + q % 32, 0.0);"},
		{"adagrad_sum relation rows at the entity width", "if (tb == 2) d = dR; // relation rows are relWidth wide\n\tif (t", "if (t"},
		{"adagrad_each steps only a row's first span", "int spans = (d + (int)blockDim.x - 1) / (int)blockDim.x;", "int spans = 1;"},
		{"adagrad_each's scan past EACH_CAP forgets the step it took", "\t\t\tlast = EACH_KEY(s);\n", "\n"},
		{"each_clear leaves the rows' flags", "\ta->head[r] = -1;\n\ta->flag[r] = 0;\n", "\ta->head[r] = -1;\n"},
	}
	cases := slices.Concat(kernelCases, modelCases)
	t.Run("unmodified", func(t *testing.T) {
		t.Parallel()
		for _, c := range cases {
			require.NoError(t, checkKernels(func() gpu { g := newSrcGPU(lib); g.noBLAS = true; return g }, c))
		}
		for _, c := range eachCases {
			require.NoError(t, checkEachKernels(func() gpu { g := newSrcGPU(lib); g.noBLAS = true; return g }, c))
		}
	})
	for _, mu := range mutations {
		require.Equal(t, 1, strings.Count(src, mu.old), "%s: %q must occur once in train.cu", mu.name, mu.old)
		t.Run(mu.name, func(t *testing.T) {
			t.Parallel()
			lib, err := buildKernelLib(strings.Replace(src, mu.old, mu.new, 1))
			require.NoError(t, err)
			for _, c := range cases {
				if err := checkKernels(func() gpu { g := newSrcGPU(lib); g.noBLAS = true; return g }, c); err != nil {
					t.Logf("%s: caught: %v", mu.name, err)
					return
				}
			}
			for _, c := range eachCases {
				if err := checkEachKernels(func() gpu { g := newSrcGPU(lib); g.noBLAS = true; return g }, c); err != nil {
					t.Logf("%s: caught: %v", mu.name, err)
					return
				}
			}
			t.Errorf("planted bug not caught by any kernel check: %q → %q", mu.old, mu.new)
		})
	}
}
