# cublas.sh: sourced by run.sh and models.sh. When TIERFLOW_CUBLAS is unset,
# asks python3 (on PATH, then /opt/torch/.venv/bin/python3) for pip's nvidia
# package and exports the newest libcublas.so.N it holds (nvidia/cu13/lib or
# nvidia/cublas/lib); CUBLAS_FROM says where it came from.
CUBLAS_FROM="TIERFLOW_CUBLAS"
if [ -z "${TIERFLOW_CUBLAS:-}" ]; then
	CUBLAS_FROM="not found"
	for py in python3 /opt/torch/.venv/bin/python3; do
		command -v "$py" >/dev/null 2>&1 || continue
		lib=$(timeout 30 "$py" - 2>/dev/null <<'EOF'
import glob, os, re
try:
    import nvidia
except Exception:
    raise SystemExit(0)
hits = []
for base in list(getattr(nvidia, "__path__", [])):
    hits += glob.glob(os.path.join(base, "*", "lib", "libcublas.so.*"))
def version(p):
    return [int(x) for x in re.findall(r"\d+", p.rsplit("libcublas.so.", 1)[1])]
hits.sort(key=version, reverse=True)
if hits:
    print(hits[0])
EOF
		)
		if [ -n "$lib" ]; then
			export TIERFLOW_CUBLAS="$lib"
			CUBLAS_FROM="$py"
			break
		fi
	done
fi

