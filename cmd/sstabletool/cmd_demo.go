package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

// demoCommand is the demo command.
func demoCommand() *cli.Command {
	return command(&cli.Command{
		Name:  "demo",
		Usage: "write the built-in demo sstable and tour what sstabletool finds in it",
		Description: "Writes a synthetic legacy (nc) sstable from the demo workload profile — a clustered table\n" +
			"with a static column, a collection, deletions, TTLs and a few oversized partitions — then shows\n" +
			"its biggest partitions, verifies it, and estimates what rewriting it as oa (Cassandra 5.0) saves.\n" +
			"Running sstabletool with no arguments does this (or opens the browser on a terminal).\n\n" +
			"Examples:\n" +
			"  sstabletool demo --keep /tmp/demo   # keep the sstable to try the other commands on",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "keep", Usage: "write the demo sstable into `DIR` and keep it (default: a temporary directory, removed afterwards)"},
		},
		Action: demoAction,
	}, noArgs)
}

// rootAction runs when sstabletool gets no command: the interactive browser
// on the demo sstable on a terminal, the demo tour otherwise.
func rootAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError("unknown command %q (see sstabletool --help)", c.Args().First())
	}
	if isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd()) && os.Getenv("CI") == "" {
		return browseAction(c)
	}
	return demoAction(c)
}

func demoAction(c *cli.Context) error {
	dir := c.String("keep")
	if dir == "" {
		tmp, err := os.MkdirTemp("", "sstabletool-demo-")
		if err != nil {
			return badData(err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return badData(err)
	}
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		return badData(err)
	}
	res, err := generate.Generate(p, dir, generate.Options{Version: nc.Version})
	if err != nil {
		return badData(fmt.Errorf("writing the demo sstable: %w", err))
	}
	path := res.DataPath
	out := stdout
	fmt.Fprintf(out, "sstabletool demo: a synthetic Cassandra sstable written to %s\n", path)
	fmt.Fprintf(out, "(the built-in demo workload profile; try `sstabletool browse` on a terminal to explore it)\n\n")

	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		return badData(err)
	}
	var parts []sstable.PartitionSummary
	var rowsTotal, cells, tombstones int64
	err = s.ScanPartitions(sstable.ScanOptions{}, func(ps *sstable.PartitionSummary) error {
		q := *ps
		q.Key = append([]byte(nil), ps.Key...)
		parts = append(parts, q)
		rowsTotal += ps.Rows
		cells += ps.Cells
		tombstones += ps.Tombstones
		return nil
	})
	if err != nil {
		s.Close()
		return badData(err)
	}
	fi, _ := os.Stat(path)
	fmt.Fprintf(out, "%s-format sstable, %s: %d partitions, %d rows, %d cells, %d tombstones; Data.db %s on disk, %s uncompressed\n\n",
		s.Version().Name, s.Partitioner().Name(), len(parts), rowsTotal, cells, tombstones, cellfmt.Human(fi.Size()), cellfmt.Human(s.Data().Length()))
	sort.Slice(parts, func(i, j int) bool { return parts[i].Size > parts[j].Size })
	fmt.Fprintln(out, "Largest partitions (sstabletool partitions --sort size):")
	fmt.Fprintf(out, "  %-22s %12s %10s %8s %8s %11s\n", "key", "offset", "size", "rows", "cells", "tombstones")
	for _, ps := range parts[:min(5, len(parts))] {
		fmt.Fprintf(out, "  %-22s %12d %10d %8d %8d %11d\n", keyString(s, ps.Key), ps.Offset, ps.Size, ps.Rows, ps.Cells, ps.Tombstones)
	}
	s.Close()

	r := verify.SSTable(path, sstable.Options{}, nil)
	fmt.Fprintf(out, "\nsstabletool verify: ")
	if r.OK() {
		fmt.Fprintf(out, "OK (%s: %s)\n", words.Plural(len(r.Checks), "check"), strings.Join(r.Checks, "; "))
	} else {
		fmt.Fprintf(out, "%s: %v\n", words.Plural(len(r.Problems), "problem"), r.Problems)
	}

	est, err := convert.Estimate(path, convert.Options{To: oa.Version})
	if err != nil {
		return badData(err)
	}
	var before, after int64
	fmt.Fprintf(out, "\nsstabletool savings (rewriting %s as oa, Cassandra 5.0's compact DeletionTime):\n", est.From)
	for _, comp := range est.Components {
		before += comp.Before
		after += comp.After
		if comp.Before != comp.After {
			fmt.Fprintf(out, "  %-18s %10d -> %10d bytes (%+d)\n", comp.Name, comp.Before, comp.After, comp.After-comp.Before)
		}
	}
	fmt.Fprintf(out, "  %-18s %10d -> %10d bytes (%.2f%% saved)\n", "all components", before, after, 100*float64(before-after)/float64(before))
	du := est.DataUncompressed
	fmt.Fprintf(out, "  %-18s %10d -> %10d bytes (%d LIVE partition headers x %d bytes)\n", "Data.db uncompressed", du.Before, du.After, est.Counts.Live[convert.PlacePartitionHeader], oa.LiveSaving)
	if c.String("keep") != "" {
		fmt.Fprintf(out, "\nNext: sstabletool dump -k <key> %s | sstabletool convert --to oa %s --out DIR\n", path, path)
	}
	if !r.OK() {
		return cli.Exit("the demo sstable failed verification", exitProblem)
	}
	return nil
}
