package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/upgrade"
	"github.com/sstabletool/sstabletool/internal/words"
)

// upgradeCommand is the upgrade command.
func upgradeCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "upgrade",
		Usage:     "rewrite a stopped node's sstables in place as oa (what sstableupgrade does, offline, without a JVM), crash-safely",
		ArgsUsage: "DATA_DIR|KEYSPACE_DIR|TABLE_DIR...",
		Description: "Rewrites every sstable older than --to (default oa: nb, nc and older) in each table directory under\n" +
			"the given directories as a new sstable in the same directory, under the next free generation (or a new\n" +
			"time-UUID id where the table uses them, Cassandra 4.1+), then removes the old one. snapshots/ and\n" +
			"backups/ are left alone. Each sstable is replaced through Cassandra's own transaction log\n" +
			"(<version>_txn_upgradesstables_<uuid>.log: ADD, REMOVE, COMMIT records with their checksums), so after a\n" +
			"kill or power loss at any point either the next run or Cassandra's startup ends with exactly one copy of\n" +
			"every sstable; the next run says what it found and finishes or rolls back the interrupted step, then\n" +
			"carries on. New files get the old sstable's mode and owner; each is fsynced, and so is the directory.\n" +
			"Each new sstable is verified (checksums, structure, every cell compared with the old one) before the old\n" +
			"one is removed (--verify=false skips it).\n\n" +
			"The node must be stopped (nodetool drain, then stop Cassandra): upgrade refuses when a process has a file\n" +
			"open under the directories, when the commit log (<data>/../commitlog, or --commitlog) was written more\n" +
			"than a minute after the newest sstable, or when a file in a table directory changes during the run;\n" +
			"--force skips these checks.\n\n" +
			"Exit codes: 0 upgraded (or nothing to do), 1 a rewrite failed verification (rolled back, the old\n" +
			"sstable kept), 2 unreadable sstables, bad usage, or a node that looks live.\n\n" +
			"Examples:\n" +
			"  sstabletool upgrade /var/lib/cassandra/data --dry-run       # the plan and the exact bytes it saves\n" +
			"  sstabletool upgrade /var/lib/cassandra/data                 # every keyspace, nb/nc -> oa\n" +
			"  sstabletool upgrade /var/lib/cassandra/data/shop --jobs 1 --json\n" +
			"  sstabletool upgrade /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2 -k   # keep the old sstables too\n" +
			"  sstabletool upgrade /var/lib/cassandra/data --commitlog /var/lib/cassandra/commitlog --verify=false --access mmap\n" +
			"  sstabletool upgrade /var/lib/cassandra/data/shop --to oa --force   # a node known to be stopped, whatever its commit log says",
		Flags: []cli.Flag{
			oneOf(&cli.StringFlag{Name: "to", Value: "oa", Usage: "target big-format version; sstables older than it are rewritten"},
				bigVersionNames()...).parsedBy(func(s string) error { _, err := upgradeTarget(s); return err }),
			&cli.BoolFlag{Name: "dry-run", Usage: "change nothing: print the plan and the exact bytes it would save"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), DefaultText: "the number of cores", Usage: "sstables rewritten at once"},
			&cli.BoolFlag{Name: "verify", Value: true, Usage: "verify each new sstable against the old one before removing the old one (--verify=false to skip)"},
			&cli.BoolFlag{Name: "keep-source", Aliases: []string{"k"}, Usage: "do not delete the old sstables (as sstableupgrade -k): both copies stay live, and a second run rewrites the old ones again"},
			&cli.BoolFlag{Name: "force", Usage: "skip the checks that the node is stopped"},
			&cli.StringSliceFlag{Name: "commitlog", Usage: "the node's commit log `DIR` (default: commitlog/ beside the data directory)"},
			rewriteAccessFlag, jsonFlag,
		},
		Action: upgradeAction,
	}, argSpec{min: 1, max: -1, what: "data, keyspace or table directory"})
}

// upgradeTarget is the version --to names: a big-format one.
func upgradeTarget(name string) (format.Version, error) {
	to, err := format.ParseVersion(name)
	if err != nil {
		if _, berr := format.ParseFormatVersion(format.BTI, name); berr == nil {
			return to, fmt.Errorf("upgrade writes big-format versions (ma..oa); %s is BTI", name)
		}
	}
	return to, err
}

// bigVersionNames are the big-format versions releases wrote.
func bigVersionNames() []string {
	var out []string
	for _, v := range format.Released() {
		if v.Format == format.Big {
			out = append(out, v.Name)
		}
	}
	return out
}

func upgradeAction(c *cli.Context) error {
	to, err := upgradeTarget(c.String("to"))
	if err != nil {
		return usageError("--to %s: %v", c.String("to"), err)
	}
	a, err := rewriteAccess(c)
	if err != nil {
		return err
	}
	if c.Int("jobs") < 1 {
		return usageError("--jobs %d: give at least 1", c.Int("jobs"))
	}
	plan, err := upgrade.NewPlan(c.Args().Slice(), to)
	if err != nil {
		return usageError("%v", err)
	}
	js := c.Bool("json")
	dry := c.Bool("dry-run")
	if len(plan.Tables) == 0 {
		for _, f := range plan.Failed {
			fmt.Fprintf(stderr, "sstabletool: %s: %s\n", f.Path, f.Reason)
		}
		return usageError("no sstables found under %s", strings.Join(c.Args().Slice(), " "))
	}
	o := upgrade.Options{Verify: c.Bool("verify"), KeepSource: c.Bool("keep-source"), Force: c.Bool("force"),
		DryRun: dry, Jobs: c.Int("jobs"), Access: a, CommitLogs: c.StringSlice("commitlog")}
	if !js {
		verb := "rewrites"
		if dry {
			verb = "would rewrite (dry run: nothing is changed)"
		}
		withWork := 0
		for _, t := range plan.Tables {
			if len(t.Upgrade) > 0 {
				withWork++
			}
		}
		of := ""
		if withWork != len(plan.Tables) {
			of = " (of " + words.Plural(len(plan.Tables), "table directory") + " found)"
		}
		fmt.Fprintf(stdout, "upgrade to %s: %s %s in %s%s\n", to.Name, verb, words.Plural(plan.Count, "sstable"),
			words.Plural(withWork, "table directory"), of)
		o.Log = func(line string) { fmt.Fprintln(stdout, line) }
	}
	prog := newProgress("upgrade", 0)
	o.Progress = func(done, total int64) { prog.total = total; prog.update(done) }
	rep, runErr := upgrade.Run(plan, o)
	prog.done()
	if js {
		if err := writeJSON(rep); err != nil {
			return err
		}
	} else if runErr == nil || len(rep.Rewritten) > 0 || len(rep.Recovered) > 0 {
		// A run refused before it changed anything (a live node) prints
		// the refusal alone, not a summary of nothing done.
		printUpgradeSummary(rep)
	}
	if runErr != nil {
		return cli.Exit(runErr.Error(), exitBadData)
	}
	switch {
	case len(rep.Failed) > 0:
		return cli.Exit(fmt.Sprintf("%s could not be upgraded", words.Plural(len(rep.Failed), "sstable or path")), exitBadData)
	case len(rep.Problems) > 0:
		return cli.Exit(fmt.Sprintf("%s failed verification; rolled back, the old sstables kept", words.Plural(len(rep.Problems), "rewrite")), exitProblem)
	}
	return nil
}

func printUpgradeSummary(rep *upgrade.Report) {
	var already, snapshots, backups int
	for _, s := range rep.Skipped {
		switch {
		case strings.HasPrefix(s.Reason, "already "):
			already++
		case filepath.Base(s.Path) == format.SnapshotsDir:
			snapshots++
		case filepath.Base(s.Path) == format.BackupsDir:
			backups++
		default:
			fmt.Fprintf(stdout, "skipped %s: %s\n", s.Path, s.Reason)
		}
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(stderr, "sstabletool: %s: %s\n", f.Path, f.Reason)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stdout, "warning: a real run would refuse: %s\n", w)
	}
	verb := "rewrote"
	if rep.DryRun {
		verb = "would rewrite"
	}
	fmt.Fprintf(stdout, "%s %s: %d -> %d bytes, %s %d bytes (%s)\n", verb, words.Plural(len(rep.Rewritten), "sstable"), rep.Before, rep.After,
		map[bool]string{true: "would save", false: "saved"}[rep.DryRun], rep.Saved, pct(rep.Saved, rep.Before))
	var notes []string
	if already > 0 {
		notes = append(notes, words.Plural(already, "sstable")+" already "+rep.To)
	}
	if snapshots > 0 {
		notes = append(notes, words.Plural(snapshots, "snapshots/ directory")+" left alone")
	}
	if backups > 0 {
		notes = append(notes, words.Plural(backups, "backups/ directory")+" left alone")
	}
	if len(notes) > 0 {
		fmt.Fprintf(stdout, "(%s)\n", strings.Join(notes, ", "))
	}
}
