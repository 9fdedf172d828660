package main

import (
	"embed"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The completion scripts, one per shell: each hands the command line to
// __complete (complete.go) and shows what it prints.
//
//go:embed completion/sstabletool.bash completion/_sstabletool completion/sstabletool.fish
var completionFiles embed.FS

// completionScripts are the shells, each with its script's file.
var completionScripts = []struct{ shell, file string }{
	{"bash", "completion/sstabletool.bash"},
	{"zsh", "completion/_sstabletool"},
	{"fish", "completion/sstabletool.fish"},
}

func completionShells() []string {
	var out []string
	for _, s := range completionScripts {
		out = append(out, s.shell)
	}
	return out
}

// completionCommand is the completion command.
func completionCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: strings.Join(completionShells(), "|"),
		Description: "The script completes commands, flags, the values of flags that take one of a fixed set\n" +
			"(--to, --access, --mode, --format, --datasets...) and paths: directories first, then sstables'\n" +
			"Data.db, their other components, then other files. It asks this sstabletool for the candidates\n" +
			"(the hidden command __complete), so it knows every command and flag of the build that runs.\n" +
			"docs/install.md says where each shell looks for it.\n\n" +
			"Examples:\n" +
			"  source <(sstabletool completion bash)                  # bash: this shell\n" +
			"  sstabletool completion bash > ~/.local/share/bash-completion/completions/sstabletool\n" +
			"  source <(sstabletool completion zsh)                   # zsh: this shell (after compinit)\n" +
			"  sstabletool completion zsh > \"${fpath[1]}/_sstabletool\"\n" +
			"  sstabletool completion fish | source                   # fish: this shell\n" +
			"  sstabletool completion fish > ~/.config/fish/completions/sstabletool.fish",
		Action:       completionAction,
		BashComplete: completeShells,
	}, argSpec{min: 1, max: 1, what: "shell: " + orList(completionShells())})
}

func completionAction(c *cli.Context) error {
	shell := c.Args().First()
	i := slices.Index(completionShells(), shell)
	if i < 0 {
		return usageError("completion: no script for %q: give %s (see sstabletool completion --help)", shell, orList(completionShells()))
	}
	b, err := completionFiles.ReadFile(completionScripts[i].file)
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(b)
	return err
}

// completeShells is the completion command's BashComplete: the shells.
func completeShells(c *cli.Context) {
	var out completion
	if c.NArg() == 1 {
		for _, s := range completionShells() {
			if strings.HasPrefix(s, c.Args().First()) {
				out.cands = append(out.cands, candidate{word: s})
			}
		}
	}
	out.write(c.App.Writer)
}

// completeCommandNames is the help command's BashComplete: the commands.
func completeCommandNames(c *cli.Context) {
	out := completion{}
	if c.NArg() == 1 {
		out = commandCandidates(c.App, c.Args().First())
	}
	out.write(c.App.Writer)
}

// internalCompleteCommand is __complete, which the scripts call: its
// arguments are the words of a command line after "sstabletool", the last
// the one being completed (see complete.go).
func internalCompleteCommand() *cli.Command {
	return command(&cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true, // the arguments are another command line
		Usage:           "print the completions of a command line, for the scripts of sstabletool completion",
		ArgsUsage:       "WORD...",
		Description: "Prints one candidate a line (word, or word<TAB>description), then a line of directives\n" +
			"(:files when the candidates are file names).\n\n" +
			"Examples:\n" +
			"  sstabletool __complete convert --to ''\n" +
			"  sstabletool __complete dump -",
		Action: func(c *cli.Context) error {
			complete(c.App, c.Args().Slice()).write(c.App.Writer)
			return nil
		},
	}, argSpec{min: 0, max: -1})
}
