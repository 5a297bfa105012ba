# bash completion for andrea — installed as share/bash-completion/completions/andrea.
# Commands and each command's options are read from `andrea --help` and `andrea CMD --help`, so
# they follow the binary; option values (suites, devices, formats) are listed here; everything
# else completes file names (checkpoints, dumps, catalogs, probe files, folders).

_andrea_suites="prev_token induction duplicate bracket bracket_close entity bos positional dormant copy_suppression retrieval successor all"

_andrea() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    fi
    local bin=${words[0]}
    # the command: the first word after `andrea` that is not an option
    local cmd="" i
    for ((i = 1; i < cword; i++)); do
        [[ ${words[i]} != -* ]] && { cmd=${words[i]}; break; }
    done
    if [[ -z $cmd ]]; then
        local cmds
        cmds=$("$bin" --help 2>/dev/null | awk '/^commands:/{f=1; next} f && /^  [a-z]/{print $1}')
        COMPREPLY=($(compgen -W "$cmds help --help --version" -- "$cur"))
        return
    fi
    case $prev in
        --probes)
            COMPREPLY=($(compgen -W "$_andrea_suites" -- "${cur##*,}"))
            if [[ $cur == *,* ]]; then
                local head=${cur%,*}
                COMPREPLY=("${COMPREPLY[@]/#/$head,}")
            fi
            COMPREPLY+=($(compgen -f -X '!*.jsonl' -- "$cur") $(compgen -d -- "$cur"))
            return ;;
        --class) COMPREPLY=($(compgen -W "$_andrea_suites" -- "$cur")); return ;;
        --device) COMPREPLY=($(compgen -W "auto cpu cuda" -- "$cur")); return ;;
        --maps) COMPREPLY=($(compgen -W "fp16 fp32" -- "$cur")); return ;;
        --contrib) COMPREPLY=($(compgen -W "none norm full" -- "$cur")); return ;;
        --precision) COMPREPLY=($(compgen -W "tf32 tf32x3 fp32" -- "$cur")); return ;;
        --report-maps) COMPREPLY=($(compgen -W "0 1 2 all labelled" -- "$cur")); return ;;
        --report) COMPREPLY=($(compgen -W "small full" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
        --out|--tokenizer) COMPREPLY=($(compgen -d -- "$cur")); [[ $prev == --out ]] && COMPREPLY+=($(compgen -f -- "$cur")); return ;;
        --n|--len|--seed|--batch|--gzip|--step|--layer|--head|--heads|--min-score|--timeout|--temperature|-n|--prompt)
            return ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$bin" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    if [[ $cmd == help ]]; then
        local cmds
        cmds=$("$bin" --help 2>/dev/null | awk '/^commands:/{f=1; next} f && /^  [a-z]/{print $1}')
        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
}
complete -F _andrea andrea
