#!/usr/bin/env bash
# ci-install.sh — install the Debian packages of tools/ci-packages.txt that are missing (the
# sanitizer and fuzz jobs call it). Safe to run again; needs root only when something is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
missing=()
while read -r pkg; do
  [[ -z $pkg || $pkg == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < "$here/tools/ci-packages.txt"
if ((${#missing[@]})); then
  echo "ci-install: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
