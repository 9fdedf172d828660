package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/statsedit"
)

// levelResetCommand is the level-reset command.
func levelResetCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "level-reset",
		Usage:     "put a table's sstables back on level 0 in their Statistics.db (sstablelevelreset, without a JVM)",
		ArgsUsage: "--really-reset (TABLE_DIR|PATH... | --data DIR KEYSPACE TABLE)",
		Description: "What sstablelevelreset does: every sstable of the table whose level is above 0 gets level 0\n" +
			"(MetadataSerializer.mutateLevel), so that leveled compaction starts over from L0; use it when leaving\n" +
			"LeveledCompactionStrategy, or when the levels are broken. First, as Cassandra's tool does, the leftovers\n" +
			"of unfinished transactions in the table's directories are removed, as Cassandra's startup would remove\n" +
			"them (a transaction log it would refuse stops the command, and nothing changes). Its lines are\n" +
			"sstablelevelreset's: \"Changing level from N to 0 on <Data.db>\" or \"Skipped <Data.db> since it is already\n" +
			"on level 0\". --really-reset is required, as Cassandra's tool requires it.\n\n" +
			"Only Statistics.db changes, and in it only the level and the stats component's CRC32, through\n" +
			"Statistics.db.tmp, fsync and rename, as repaired-set. The node must be stopped: a process holding the\n" +
			"table's files open is named and the command refuses (--force overrides).\n\n" +
			"Exit codes: 0 done, 2 an sstable could not be read or changed, no sstables, bad usage, or a live node.\n\n" +
			"Examples:\n" +
			"  sstabletool level-reset --really-reset /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool level-reset --really-reset --data /var/lib/cassandra/data shop orders --json   # --data once per data directory",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "really-reset", Usage: "required: confirms the node is stopped and the levels are to be reset"},
			dataFlag, forceFlag, recursiveFlag, jsonFlag,
		},
		Action: levelResetAction,
	}, argSpec{min: 0, max: -1, what: "table directory or sstable"})
}

const levelResetUsage = "This command should be run with Cassandra stopped, otherwise you will get very strange behavior\n" +
	"Verify that Cassandra is not running and then execute the command like this:\n" +
	"Usage: sstabletool level-reset --really-reset (<table directory> | --data <data directory> <keyspace> <table>)"

// levelResetReport is level-reset's --json.
type levelResetReport struct {
	Cleaned  []cleanedLog `json:"cleaned_up"`
	SSTables []any        `json:"sstables"` // mutated or sstableError
}

func levelResetAction(c *cli.Context) error {
	if !c.Bool("really-reset") || c.NArg() == 0 {
		return usageError("%s", levelResetUsage)
	}
	paths, err := tableTargets(c)
	if err != nil {
		return err
	}
	js := c.Bool("json")
	say := func(line string) { fmt.Fprintln(stdout, line) }
	if js {
		say = nil
	}
	rep, sc, err := prepareInPlace(c, paths, say)
	if err != nil {
		return err
	}
	sc.verb = "changed"
	zero := int32(0)
	err = sc.each(func(p string) error {
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return err
		}
		before, err := statsedit.Read(d)
		if err != nil {
			return err
		}
		res := &statsedit.Result{Path: d.Path(format.ComponentStatistics), Before: before, After: before}
		if before.Level > 0 {
			// sstablelevelreset prints the line before it changes the file.
			if say != nil {
				say(fmt.Sprintf("Changing level from %d to 0 on %s", before.Level, p))
			}
			if res, err = statsedit.Mutate(nil, d, statsedit.Change{Level: &zero}); err != nil {
				return err
			}
		} else if say != nil {
			say(fmt.Sprintf("Skipped %s since it is already on level 0", p))
		}
		rep.SSTables = append(rep.SSTables, mutated{SSTable: p, Result: res})
		return nil
	}, func(e sstableError) { rep.SSTables = append(rep.SSTables, e) })
	if err != nil {
		return err
	}
	if js {
		if err := writeJSON(rep); err != nil {
			return err
		}
	}
	return sc.err()
}

// prepareInPlace is what level-reset and relevel do before they change
// levels, as sstablelevelreset and sstableofflinerelevel do: refuse a live
// node, remove unfinished transactions' leftovers in the table
// directories, then find the table's sstables.
func prepareInPlace(c *cli.Context, paths []string, say func(string)) (*levelResetReport, *scan, error) {
	dirs, err := tableDirsUnder(paths, c.Bool("recursive"))
	if err != nil {
		return nil, nil, usageError("%s: %v", c.Command.Name, err)
	}
	if err := refuseLive(c, dirs); err != nil {
		return nil, nil, err
	}
	rep := &levelResetReport{Cleaned: []cleanedLog{}, SSTables: []any{}}
	cleaned, err := removeLeftovers(dirs, say)
	rep.Cleaned = append(rep.Cleaned, cleaned...)
	if err != nil {
		if c.Bool("json") {
			writeJSON(rep)
		}
		return nil, nil, cli.Exit(fmt.Sprintf("%s: %v (Cassandra would refuse to start too; no level was changed)", c.Command.Name, err), exitBadData)
	}
	sc, err := findSSTablesIn(c, paths)
	if err != nil {
		if c.Command.Name == "level-reset" {
			// sstablelevelreset's words.
			return nil, nil, usageError("Found no sstables, did you give the correct keyspace/table? (%v)", err)
		}
		return nil, nil, err
	}
	return rep, sc, nil
}
