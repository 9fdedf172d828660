package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/tablefiles"
	"github.com/sstabletool/sstabletool/internal/words"
)

// utilCommand is the util command.
func utilCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "util",
		Usage:     "list a table's files as Cassandra's transaction logs see them, or clean up unfinished transactions (sstableutil, without a JVM)",
		ArgsUsage: "[-t all|tmp|final] [-o] [-v] [-c] (TABLE_DIR... | --data DIR KEYSPACE TABLE)",
		Description: "What sstableutil does. Without -c it prints \"Listing files...\" and the canonical path of each file of\n" +
			"the table's directories as LifecycleTransaction.getFiles sees it: every file is final except those a\n" +
			"transaction log (<version>_txn_<operation>_<id>.log) marks as temporary: the sstables an unfinished or\n" +
			"aborted compaction, flush or upgrade was writing, or those a committed one replaced, which Cassandra\n" +
			"deletes at startup. -t final lists the final files only, -t tmp the temporary ones, -t all (the\n" +
			"default) both; -o adds the logs themselves. -v says what each file is (final, temporary and which log\n" +
			"makes it so, txn log). A log that Cassandra would refuse (a bad checksum, records that no longer match\n" +
			"the disk) is an error, as it is for sstableutil and for Cassandra's startup.\n\n" +
			"-c prints \"Cleaning up...\" and removes every unfinished transaction's leftovers as Cassandra's startup\n" +
			"does (LogTransaction.removeUnfinishedLeftovers): a committed log's replaced sstables, an unfinished or\n" +
			"aborted log's new ones, then the log, each directory fsynced as Cassandra fsyncs it; it names what it\n" +
			"deleted. The node must be stopped for -c: a process holding the table's files open is named and the\n" +
			"command refuses (--force overrides). -r lists (or cleans) every directory below the arguments.\n\n" +
			"Exit codes: 0 done, 1 a transaction log Cassandra would refuse, 2 unreadable directories, bad usage, or a\n" +
			"live node.\n\n" +
			"Examples:\n" +
			"  sstabletool util /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool util -t tmp -o -v --data /var/lib/cassandra/data shop orders     # what startup would delete, and why\n" +
			"  sstabletool util -c --data /var/lib/cassandra/data shop orders               # delete it now\n" +
			"  sstabletool util -r /var/lib/cassandra/data -t tmp --json",
		Flags: []cli.Flag{
			oneOf(&cli.StringFlag{Name: "type", Aliases: []string{"t"}, Value: "all", Usage: "`TYPE` of files to list: all (final or temporary), tmp (temporary only), final (final only)"}, "all", "tmp", "final"),
			&cli.BoolFlag{Name: "cleanup", Aliases: []string{"c"}, Usage: "clean up any outstanding transactions (as Cassandra's startup does)"},
			&cli.BoolFlag{Name: "oplog", Aliases: []string{"o"}, Usage: "include operation logs (the transaction logs)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say what each file is, and why it is temporary"},
			dataFlag, forceFlag, recursiveFlag, jsonFlag,
		},
		Action: utilAction,
	}, argSpec{min: 1, max: -1, what: "table directory"})
}

// utilListing is util's --json: the files of each directory, or what a
// cleanup did.
type utilListing struct {
	Files   []tablefiles.File `json:"files"`
	Cleaned []cleanedLog      `json:"cleaned_up,omitempty"`
	Errors  []sstableError    `json:"errors,omitempty"`
}

func utilAction(c *cli.Context) error {
	show := map[string]func(tablefiles.Kind) bool{
		"all":   func(k tablefiles.Kind) bool { return k != tablefiles.TxnLog },
		"tmp":   func(k tablefiles.Kind) bool { return k == tablefiles.Temporary },
		"final": func(k tablefiles.Kind) bool { return k == tablefiles.Final },
	}[c.String("type")]
	if show == nil {
		return usageError("util: -t/--type %q: give all, tmp or final", c.String("type"))
	}
	paths, err := tableTargets(c)
	if err != nil {
		return err
	}
	dirs, err := tableDirsUnder(paths, c.Bool("recursive"))
	if err != nil {
		return usageError("util: %v", err)
	}
	js, verbose := c.Bool("json"), c.Bool("verbose")
	out := utilListing{Files: []tablefiles.File{}}
	if c.Bool("cleanup") {
		if err := refuseLive(c, dirs); err != nil {
			return err
		}
		say := func(line string) { fmt.Fprintln(stdout, line) }
		if js {
			say = nil
		} else {
			say("Cleaning up...")
		}
		cleaned, err := removeLeftovers(dirs, say)
		out.Cleaned = cleaned
		if out.Cleaned == nil {
			out.Cleaned = []cleanedLog{}
		}
		if !js {
			for _, cl := range cleaned {
				if verbose {
					for _, d := range cl.Deleted {
						say("deleted " + d)
					}
				}
			}
			if len(cleaned) == 0 {
				say("no unfinished transaction")
			}
		}
		if js {
			if err := writeJSON(out); err != nil {
				return err
			}
		}
		if err != nil {
			return cli.Exit("util: "+err.Error(), exitProblem)
		}
		return nil
	}
	if !js {
		fmt.Fprintln(stdout, "Listing files...")
	}
	problems, unreadable := 0, 0
	for _, dir := range dirs {
		files, err := tablefiles.List(dir)
		if err != nil {
			var le *tablefiles.ListError
			if errors.As(err, &le) {
				problems++
			} else {
				unreadable++
			}
			out.Errors = append(out.Errors, sstableError{SSTable: dir, Error: err.Error()})
			fmt.Fprintln(stderr, "sstabletool: util:", err)
			continue
		}
		for _, f := range files {
			if !show(f.Kind) && !(f.Kind == tablefiles.TxnLog && c.Bool("oplog")) {
				continue
			}
			out.Files = append(out.Files, f)
			if js {
				continue
			}
			switch {
			case !verbose:
				fmt.Fprintln(stdout, f.Path)
			case f.Kind == tablefiles.Temporary:
				fmt.Fprintf(stdout, "%s  temporary: %s %s\n", f.Path, f.Why, f.Log)
			default:
				fmt.Fprintf(stdout, "%s  %s\n", f.Path, f.Kind)
			}
		}
	}
	if js {
		if err := writeJSON(out); err != nil {
			return err
		}
	}
	switch {
	case unreadable > 0:
		return cli.Exit(fmt.Sprintf("util: %s could not be listed", words.Plural(unreadable+problems, "directory")), exitBadData)
	case problems > 0:
		return cli.Exit(fmt.Sprintf("util: %s with a transaction log Cassandra would refuse", words.Plural(problems, "directory")), exitProblem)
	}
	return nil
}
