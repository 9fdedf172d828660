package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

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
			"sorted by size, with a size histogram. Press ? for every key, q to go back or quit.\n\n" +
			"Examples:\n" +
			"  sstabletool browse                                   # the built-in demo sstable\n" +
			"  sstabletool browse -r /var/lib/cassandra/data/shop   # one line per sstable, then its partitions\n" +
			"  NO_COLOR=1 sstabletool browse nc-1-big-Data.db",
		Flags: []cli.Flag{
			recursiveFlag, snapshotsFlag, backupsFlag, accessFlag,
			&cli.BoolFlag{Name: "no-mouse", Usage: "leave the mouse to the terminal (select text) instead of scrolling"},
		},
		Action: browseAction,
	}, argSpec{min: 0, max: -1})
}

func browseAction(c *cli.Context) error {
	o, err := openOptions(c)
	if err != nil {
		return err
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
	bad, err := browse(paths, tui.Options{Access: o.Access, NoMouse: c.Bool("no-mouse"), Unreadable: unreadable})
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
