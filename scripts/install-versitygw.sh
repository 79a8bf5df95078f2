#!/usr/bin/env bash
# Installs versitygw (github.com/versity/versitygw), an S3-compatible server
# whose posix backend serves a directory as S3, at a pinned version into
# bin/tools/ (ignored by git): the real object store the several-trainer
# tests start (internal/s3server). Built from the Go module proxy with this
# machine's Go; skipped when the pinned binary is already there (about 3
# minutes the first time on 2 cores, nothing after).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v1.8.0
dir="$PWD/bin/tools"
bin="$dir/versitygw-$VERSION"
if [ -x "$bin" ]; then
	exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "installing versitygw $VERSION into $dir (go install, once)"
start=$(date +%s)
GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "github.com/versity/versitygw/cmd/versitygw@$VERSION"
mv "$tmp/versitygw" "$bin"
echo "versitygw $VERSION installed in $(($(date +%s) - start)) s: $bin"
