#!/usr/bin/env bash
# install-packages.sh LIST... — install the Debian packages named in the list files (one a line,
# '#' comments) that are not installed yet. Installs nothing (and needs no network) when all are
# there, so every set-up and test script can call it.
set -euo pipefail
missing=()
for list in "$@"; do
  while read -r pkg; do
    [[ -z $pkg || $pkg == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < "$list"
done
if ((${#missing[@]})); then
  echo "install-packages: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
