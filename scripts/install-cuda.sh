#!/usr/bin/env bash
# install-cuda.sh installs what `make build-cuda` needs on Debian 12 (bookworm):
# the CUDA 11.8 headers and driver-API stub (nvidia-cuda-dev), the driver's
# user-space library (libcuda1, linked by gorgonia.org/cu) and NVRTC (used at
# build time only, to compile the kernels to PTX). It enables the contrib and
# non-free components in the apt sources idempotently. Run as root; it is a
# no-op when everything is already installed.
set -euo pipefail

pkgs=(nvidia-cuda-dev libcuda1 libnvrtc11.2 gcc)
# ptxas (CI assembles the PTX for sm_90 when it is present) comes from
# nvidia-cuda-toolkit, which is large; install it only when asked.
if [ "${WITH_PTXAS:-0}" = 1 ]; then pkgs+=(nvidia-cuda-toolkit); fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-cuda: all of ${pkgs[*]} already installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-cuda: need root to install ${missing[*]}" >&2
	exit 1
fi

# Enable contrib and non-free for every Debian source (deb822 or one-line format).
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ]; then
	sed -i -E '/^Components:/{/contrib/!s/$/ contrib/;/non-free( |$)/!s/$/ non-free/}' "$src"
elif [ -f /etc/apt/sources.list ]; then
	sed -i -E '/^deb .*debian/{/contrib/!s/$/ contrib/;/non-free( |$)/!s/$/ non-free/}' /etc/apt/sources.list
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-cuda: installed ${missing[*]}"
