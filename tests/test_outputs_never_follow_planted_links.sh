#!/bin/bash
# test_outputs_never_follow_planted_links — a link planted where andrea would put its temporary is
# never written through (common/atomic_file.c). Temporaries were "<final>.tmp-<pid>", a name anyone
# could predict: `bash -c 'ln -s victim out.h5.tmp-$$; exec andrea dump ...'` (exec keeps the pid)
# truncated the victim, and `show` wrote its HTML over it. Each command runs with links planted at
# every name of the old scheme its outputs would use; the victim must stay byte-identical, the
# command succeed, and no temporary be left.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
M=$ANDREA_SRC/models/andrea-tiny.bin
cd "$tmp"
printf 'precious\n' >victim.txt
sum=$(sha256sum victim.txt | cut -d' ' -f1)
victim_intact() { [[ $(sha256sum victim.txt | cut -d' ' -f1) == "$sum" ]]; }

# dump: the dump's own temporary
if bash -c 'ln -s "$PWD/victim.txt" out.h5.tmp-$$; exec "$0" dump "$1" --n 2 --out out.h5 --quiet' "$A" "$M" 2>d.err; then
  victim_intact && [[ -s out.h5 ]] && ok "dump writes beside a link planted at <out>.tmp-<pid>, not through it" \
    || bad "dump through a planted link" "victim: $(head -c 40 victim.txt | od -c | head -2)"
else
  bad "dump with a planted link" "$(cat d.err)"
fi
rm -f out.h5.tmp-*

# show: its index.html and data/meta.js
mkdir -p page/data
if bash -c 'ln -s "$PWD/victim.txt" page/index.html.tmp-$$; ln -s "$PWD/victim.txt" page/data/meta.js.tmp-$$
            exec "$0" show "$1" "The cat sat." --out page --quiet' "$A" "$M" 2>s.err; then
  victim_intact && grep -q '<html' page/index.html && ok "show writes beside links planted at its pages' temporaries" \
    || bad "show through a planted link" "victim: $(head -c 60 victim.txt)"
else
  bad "show with a planted link" "$(cat s.err)"
fi

# analyze: a new catalog's temporary
if bash -c 'mkdir -p r; ln -s "$PWD/victim.txt" r/catalog.db.tmp-$$; exec "$0" analyze "$1" --out r --quiet --ablate-items 0 >/dev/null' \
     "$A" "$M" 2>a.err; then
  victim_intact && [[ -s r/catalog.db ]] && ok "analyze makes its catalog beside a link planted at its temporary" \
    || bad "analyze through a planted link" "victim: $(head -c 60 victim.txt)"
else
  bad "analyze with a planted link" "$(cat a.err)"
fi
left=$(find . -name '*.tmp-*' ! -type l)
[[ -z $left ]] && ok "no temporary left behind" || bad "temporaries left" "$left"
finish
