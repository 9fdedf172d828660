package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/tui"
)

// browseCommand is the browse command.
func browseCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "browse",
		Usage:     "browse sstables in the terminal: biggest partitions first, rows, cells and labelled raw bytes",
		ArgsUsage: "[PATH...]",
		Description: "Opens an interactive browser. PATH is an sstable component or a data directory (-r to\n" +
			"recurse); without PATH it writes the built-in demo sstable to a temporary directory and\n" +
			"opens that. With several sstables it starts with one line per sstable (size, compression,\n" +
			"timestamps, droppable tombstones, what an oa rewrite changes on disk and why; an sstable that\n" +
			"cannot be opened is a row with its error); enter opens the partitions,\n" +
			"sorted by size, with a size histogram. Press ? for every key, q to go back or quit.\n" +
			"M (or --merge) shows the table merged: the partitions of a table directory's sstables as\n" +
			"Cassandra's read path merges them, each row's cells with the sstable ([n]) each came from; e on a\n" +
			"partition explains it (every version in every sstable, and why each loser lost); M goes back.\n" +
			"The key and clustering columns are named by the node's schema (the system_schema of the data\n" +
			"directory the sstables lie in, or --schema-from) or --schema, as for the other commands.\n\n" +
			"Examples:\n" +
			"  sstabletool browse                                   # the built-in demo sstable\n" +
			"  sstabletool browse -r /var/lib/cassandra/data/shop   # one line per sstable, then its partitions\n" +
			"  NO_COLOR=1 sstabletool browse nc-1-big-Data.db\n" +
			"  sstabletool browse --merge /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool browse --merge --now 2024-05-01T00:00:00Z .   # merged as of a date: which TTLs have run out",
		Flags: []cli.Flag{
			recursiveFlag, snapshotsFlag, backupsFlag, accessFlag,
			&cli.BoolFlag{Name: "no-mouse", Usage: "leave the mouse to the terminal (select text) instead of scrolling"},
			&cli.BoolFlag{Name: "merge", Usage: "open the table's partitions merged (its sstables as Cassandra's read path merges them), each cell with its sstable; e explains a partition, M goes back to the sstables"},
			nowFlag, schemaFlag, tableFlag,
		},
		Action: browseAction,
	}, argSpec{min: 0, max: -1})
}

func browseAction(c *cli.Context) error {
	o, err := openOptions(c)
	if err != nil {
		return err
	}
	// Without --now the merges are as of the current time, read when
	// each opens.
	var mergeNow int64
	if c.IsSet("now") {
		if mergeNow, err = parseNow(c); err != nil {
			return err
		}
	}
	var paths []string
	var unreadable []tui.Unreadable
	if c.NArg() == 0 {
		dir, err := os.MkdirTemp("", "sstabletool-demo-")
		if err != nil {
			return badData(err)
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(stderr, "writing the built-in demo sstable to", dir)
		p, err := generate.Demo(dir)
		if err != nil {
			return badData(fmt.Errorf("demo sstable: %w", err))
		}
		paths = []string{p}
	} else if c.NArg() == 1 && strings.HasSuffix(c.Args().First(), ".json") {
		// A saved memsim --json result opens in memsim's view.
		if ok, err := runMemview(c.Args().First()); ok || err != nil {
			return badData(err)
		}
		return usageError("%s: not a memsim --json result", c.Args().First())
	} else {
		sc, err := findSSTables(c)
		if err != nil {
			return err
		}
		for _, f := range sc.found {
			if f.Err != nil {
				unreadable = append(unreadable, tui.Unreadable{Path: f.Path, Err: f.Err})
				continue
			}
			paths = append(paths, f.Path)
		}
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	schema := func(s *sstable.SSTable) (tui.Schema, bool) {
		n, ok := schemaNames(sf, s)
		if !ok {
			return tui.Schema{}, false
		}
		return tui.Schema{Keyspace: n.Keyspace, Table: n.Table, PartitionKey: n.PartitionKey, Clustering: n.Clustering,
			DroppedTimes: sf.DroppedTimes(s)}, true
	}
	bad, err := browse(paths, tui.Options{Access: o.Access, NoMouse: c.Bool("no-mouse"), Merged: c.Bool("merge"), MergeNow: mergeNow,
		Unreadable: unreadable, Schema: schema})
	// The browser listed them; the screen is back, so say it again here.
	for _, u := range bad {
		fmt.Fprintln(stderr, "sstabletool:", failureText(u.Path, u.Err))
	}
	if err != nil {
		return badData(err)
	}
	if len(bad) > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d sstables could not be read", len(bad), len(paths)+len(unreadable)), exitBadData)
	}
	return nil
}

// browse runs the terminal UI; tests replace it.
var browse = tui.Run
