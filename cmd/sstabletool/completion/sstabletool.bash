# bash completion for sstabletool                          -*- shell-script -*-
#
# Load it into this shell:      source <(sstabletool completion bash)
# or for every shell (bash-completion loads it on first use):
#   sstabletool completion bash > ~/.local/share/bash-completion/completions/sstabletool
#
# The candidates come from "sstabletool __complete WORD...", which knows the
# commands, flags and flag values of the sstabletool that prints them.

_sstabletool() {
    local line=${COMP_LINE:0:COMP_POINT} words=() i w rest n
    # The words up to the cursor. COMP_WORDS cuts a word at = and : (the
    # characters of COMP_WORDBREAKS): glue back what no space separates, so
    # that --to=da is one word, as sstabletool reads it.
    for ((i = 0; i <= COMP_CWORD; i++)); do
        rest=${line#"${line%%[![:space:]]*}"}
        w=${COMP_WORDS[i]}
        ((i == COMP_CWORD)) && w=$rest # the current word, up to the cursor
        n=${#words[@]}
        if ((n > 0)) && [[ $rest == "$line" ]]; then
            words[n - 1]+=$w
        else
            words+=("$w")
        fi
        line=${rest:${#w}}
    done

    local prog=${words[0]} out
    [[ $prog == "~/"* ]] && prog=$HOME/${prog:2}
    out=$("$prog" __complete "${words[@]:1}" 2>/dev/null) || return 0

    # readline replaces the current word from its last = or : on (when
    # COMP_WORDBREAKS has them): the candidates lose what comes before.
    local cur=${words[${#words[@]} - 1]} keep= breaks=${COMP_WORDBREAKS//[^=:]/}
    [[ -n $breaks ]] && keep=${cur%"${cur##*[$breaks]}"}

    local directive=
    COMPREPLY=()
    while IFS= read -r w; do
        case $w in
        :*) directive=$w ;;
        *) w=${w%%$'\t'*} && COMPREPLY+=("${w#"$keep"}") ;;
        esac
    done <<<"$out"

    # The order is sstabletool's: directories, then sstables, then other files.
    compopt -o nosort 2>/dev/null
    # File names are quoted as such, and a directory takes no space after it.
    [[ $directive == *files* ]] && compopt -o filenames 2>/dev/null
    return 0
}

complete -F _sstabletool sstabletool
