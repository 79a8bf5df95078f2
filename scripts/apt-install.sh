#!/usr/bin/env bash
# apt-install.sh WHO PACKAGE… installs the Debian packages a make target
# needs, and only those missing: it first prints one line naming them
# (and that it uses apt-get), then installs them without upgrading any
# package already installed (--no-upgrade) and without recommended extras.
# Nothing is printed or installed when all are present. WHO names the
# target in that line. Run as root.
set -euo pipefail

who=$1
shift
missing=()
for p in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "$who: installing ${missing[*]} with apt-get (missing; installed packages are not upgraded)"
if [ "$(id -u)" != 0 ]; then
	echo "$who: need root to install ${missing[*]} (apt-get install --no-upgrade ${missing[*]})" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-upgrade --no-install-recommends "${missing[@]}"
