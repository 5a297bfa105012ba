#!/usr/bin/env bash
# gpu-carry.sh — download the Debian -dev packages the GPU machine lacks into .carry/debs/ (run
# here, on a Debian machine with network; .carry/ is git-ignored). The device runs carry
# ".carry/debs" and tools/gpu-check.sh unpacks them with dpkg -x into a prefix the build points at
# (-DANDREA_EXTRA_PREFIX). What the GPU machine lacks: sqlite3.h, a JSON library (cJSON), and the
# PCRE2 development files; HDF5, libpng, OpenBLAS and OpenSSL are there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pkgs="libsqlite3-dev libsqlite3-0 libcjson-dev libcjson1 libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3"
mkdir -p "$here/.carry/debs"
cd "$here/.carry/debs"
apt-get download $pkgs
du -sh .
