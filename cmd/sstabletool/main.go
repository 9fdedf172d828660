// Command sstabletool reads, browses, converts and sizes Apache Cassandra
// sstables. This package holds flags and output only; the work lives in the
// feature and format packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
)

// Exit codes an operator's script can rely on.
const (
	exitOK      = 0
	exitProblem = 1 // the command ran and found problems (verify)
	exitBadData = 2 // input could not be read or decoded, or bad usage
)

// commands lists every subcommand, each defined in a cmd_*.go file of its
// own; --help lists them in this (alphabetical) order.
func commands() []*cli.Command {
	return []*cli.Command{
		browseCommand(),
		completionCommand(),
		convertCommand(),
		demoCommand(),
		dumpCommand(),
		expiredBlockersCommand(),
		explainCommand(),
		exportCommand(),
		filterCommand(),
		generateCommand(),
		helpCommand(),
		internalCompleteCommand(),
		levelResetCommand(),
		manCommand(),
		memsimCommand(),
		metadataCommand(),
		partitionsCommand(),
		queryCommand(),
		relevelCommand(),
		repairedSetCommand(),
		savingsCommand(),
		schemaCommand(),
		scrubCommand(),
		splitCommand(),
		upgradeCommand(),
		utilCommand(),
		verifyCommand(),
		versionCommand(),
		writeCommand(),
	}
}

// command finishes a command's definition with what it takes besides
// flags; the spec is checked before the command's action runs.
func command(c *cli.Command, spec argSpec) *cli.Command {
	c.Before = spec.check
	c.OnUsageError = usageFailure
	if c.BashComplete == nil { // the candidates for its arguments (complete.go)
		c.BashComplete = spec.completeArgs
	}
	// urfave/cli gives every command a "help" subcommand (alias "h"),
	// which would take a path named h or help for a request for help
	// ("dump --merge h" printed dump's help); --help stays.
	c.HideHelpCommand = true
	withSchemaFrom(c)
	return c
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "sstabletool",
		Usage: "read, browse, convert and size Apache Cassandra sstables",
		Description: "sstabletool works directly on sstable files (big format: ma..nb, nc, oa; BTI: da); it needs no\n" +
			"running node, no cassandra.yaml and no schema. Point it at any component of an sstable\n" +
			"(for example nc-1-big-Data.db) or at a data directory.\n\n" +
			"Flags may come before or after the paths; -- ends the flags. With several paths or -r, an sstable\n" +
			"that cannot be read is named on stderr (and is an {\"sstable\", \"error\"} entry in --json), the others\n" +
			"are read, and the exit code is 2. -r skips snapshots/ and backups/ (--snapshots, --backups include\n" +
			"them), sstabletool's staging directories and the sstables an unfinished compaction's transaction\n" +
			"log marks as not live. Every command's --help ends with examples.",
		Commands: commands(),
		// urfave/cli adds --help/-h only when the app has no command of
		// its own named "help"; ours replaces its help command, so the
		// flag is declared here or "sstabletool --help" fails.
		Flags:           []cli.Flag{cli.HelpFlag},
		Version:         version(),
		Writer:          stdout,
		ErrWriter:       stderr,
		Action:          rootAction,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    usageFailure,
	}
}

func main() { os.Exit(run(os.Args)) }

// helpCommand is the help command.
func helpCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "help",
		Usage:     "show the help of sstabletool or of one command (the same as --help)",
		ArgsUsage: "[COMMAND]",
		Description: "sstabletool --version (or -v) prints the version, the commit it was built from and the\n" +
			"formats it reads; sstabletool version --json prints them for a bug report.\n\n" +
			"Examples:\n" +
			"  sstabletool help\n" +
			"  sstabletool help metadata",
		Action:       helpAction,
		BashComplete: completeCommandNames,
	}, argSpec{min: 0, max: 1, what: "command name"})
}

func helpAction(c *cli.Context) error {
	topic := c.Args().First()
	if topic == "" {
		return cli.ShowAppHelp(c)
	}
	for _, cmd := range c.App.Commands {
		if cmd.HasName(topic) {
			// The text of "sstabletool COMMAND --help".
			if cmd.HelpName == "" {
				cmd.HelpName = c.App.HelpName + " " + cmd.Name
			}
			hasHelp := false
			for _, f := range cmd.Flags {
				hasHelp = hasHelp || f == cli.HelpFlag
			}
			if !hasHelp {
				cmd.Flags = append(cmd.Flags, cli.HelpFlag)
			}
			cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, cmd)
			return nil
		}
	}
	return usageError("help: no command %q (see sstabletool --help)", topic)
}

// run executes the app and maps errors to exit codes; tests call it too.
func run(args []string) int {
	cli.VersionPrinter = printVersion
	app := newApp()
	args, err := flagsFirst(app, args)
	if err == nil {
		err = app.Run(args)
	}
	if err == nil {
		return exitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, "sstabletool:", msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(stderr, "sstabletool:", err)
	return exitBadData
}
