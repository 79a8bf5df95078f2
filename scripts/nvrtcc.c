/*
 * nvrtcc compiles one CUDA C file to PTX with NVRTC, for `make ptx`.
 *
 *   nvrtcc -arch compute_70 -o out.ptx in.cu
 *
 * It is a build-time tool only: the realrun binary embeds the PTX and the
 * driver JIT-compiles it, so neither NVRTC nor this program is needed at
 * run time. Exit status 1 and NVRTC's log on a compile error, 2 on usage.
 */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc(n + 1);
	if (!b || fread(b, 1, n, f) != (size_t)n) {
		fprintf(stderr, "nvrtcc: read %s failed\n", path);
		fclose(f);
		free(b);
		return NULL;
	}
	b[n] = 0;
	fclose(f);
	return b;
}

#define CHECK(call)                                                              \
	do {                                                                         \
		nvrtcResult r_ = (call);                                                 \
		if (r_ != NVRTC_SUCCESS) {                                               \
			fprintf(stderr, "nvrtcc: %s: %s\n", #call, nvrtcGetErrorString(r_)); \
			return 1;                                                            \
		}                                                                        \
	} while (0)

int main(int argc, char **argv) {
	const char *arch = "compute_70", *out = NULL, *in = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-arch") && i + 1 < argc) {
			arch = argv[++i];
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] != '-' && !in) {
			in = argv[i];
		} else {
			in = NULL;
			break;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "usage: nvrtcc [-arch compute_XY] -o out.ptx in.cu\n");
		return 2;
	}
	char *src = slurp(in);
	if (!src) {
		return 1;
	}
	char archopt[64];
	snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
	/* No fast math: the kernels must match the CPU engine's float32 math. */
	const char *opts[] = {archopt, "--std=c++14", "--fmad=false", "-default-device"};
	nvrtcProgram prog;
	CHECK(nvrtcCreateProgram(&prog, src, in, 0, NULL, NULL));
	nvrtcResult res = nvrtcCompileProgram(prog, 4, opts);
	size_t logSize = 0;
	nvrtcGetProgramLogSize(prog, &logSize);
	if (logSize > 1) {
		char *log = malloc(logSize);
		nvrtcGetProgramLog(prog, log);
		fprintf(stderr, "%s\n", log);
		free(log);
	}
	if (res != NVRTC_SUCCESS) {
		fprintf(stderr, "nvrtcc: %s: %s\n", in, nvrtcGetErrorString(res));
		return 1;
	}
	size_t n;
	CHECK(nvrtcGetPTXSize(prog, &n));
	char *ptx = malloc(n);
	CHECK(nvrtcGetPTX(prog, ptx));
	/* Write to a temporary file and rename: nothing half-written. */
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", out);
	FILE *f = fopen(tmp, "wb");
	if (!f || fwrite(ptx, 1, n - 1, f) != n - 1 || fclose(f) != 0) {
		perror(tmp);
		return 1;
	}
	if (rename(tmp, out) != 0) {
		perror(out);
		return 1;
	}
	nvrtcDestroyProgram(&prog);
	free(ptx);
	free(src);
	return 0;
}
