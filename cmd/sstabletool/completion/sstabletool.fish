# fish completion for sstabletool.
#
# Load it into this shell:  sstabletool completion fish | source
# or for every shell:
#   sstabletool completion fish > ~/.config/fish/completions/sstabletool.fish
#
# The candidates come from "sstabletool __complete WORD...", which knows the
# commands, flags and flag values of the sstabletool that prints them.

function __sstabletool_complete
    set -l words (commandline -opc)
    set -l prog $words[1]
    set -e words[1]
    set -l out ($prog __complete $words (commandline -ct) 2>/dev/null)
    # Each line is "word" or "word<TAB>description", as fish takes them; the
    # last is a directive, which fish needs not (it adds no space after a /).
    for line in $out
        string match -q -- ':*' $line; or printf '%s\n' $line
    end
end

complete -c sstabletool -e
# -k: in sstabletool's order (directories, then sstables, then other files)
complete -c sstabletool -f -k -a '(__sstabletool_complete)'
