package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/tui"
)

func init() {
	register(&cli.Command{
		Name:      "browse",
		Usage:     "browse sstables in the terminal: biggest partitions first, rows, cells and labelled raw bytes",
		ArgsUsage: "PATH...",
		Description: "Opens an interactive browser. PATH is an sstable component or a data directory (-r to\n" +
			"recurse). With several sstables it starts with one line per sstable (size, compression,\n" +
			"timestamps, droppable tombstones, what an oa rewrite saves); enter opens the partitions,\n" +
			"sorted by size, with a size histogram. Press ? for every key, q to go back or quit.\n\n" +
			"Examples:\n" +
			"  sstabletool browse /var/lib/cassandra/data/ks/tbl-*/\n" +
			"  NO_COLOR=1 sstabletool browse nc-1-big-Data.db",
		Flags: []cli.Flag{
			recursiveFlag, accessFlag,
			&cli.BoolFlag{Name: "no-mouse", Usage: "leave the mouse to the terminal (select text) instead of scrolling"},
		},
		Action: browseAction,
	})
}

func browseAction(c *cli.Context) error {
	if c.NArg() == 0 {
		// TODO(demo): open generate.Demo's built-in sstable once package generate exists.
		return usageError("browse: give an sstable file or data directory; the built-in demo sstable is not available yet")
	}
	paths, err := sstablePaths(c)
	if err != nil {
		return err
	}
	o, err := openOptions(c)
	if err != nil {
		return err
	}
	return badData(tui.Run(paths, tui.Options{Access: o.Access, NoMouse: c.Bool("no-mouse")}))
}
