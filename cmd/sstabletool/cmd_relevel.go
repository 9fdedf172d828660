package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/statsedit"
	"github.com/sstabletool/sstabletool/internal/words"
)

// relevelCommand is the relevel command.
func relevelCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "relevel",
		Usage:     "rebuild a leveled table's levels from its sstables' key ranges (sstableofflinerelevel, without a JVM)",
		ArgsUsage: "[--dry-run] (TABLE_DIR... | --data DIR KEYSPACE TABLE)",
		Description: "What sstableofflinerelevel does, for each directory of the table: the sstables sorted by last key,\n" +
			"the top level takes every sstable that starts after the previous one in it ends, the next level the\n" +
			"same of what is left, and so on; the first ceil(log10(number of sstables)) of these levels are kept,\n" +
			"the highest first, and the rest go to L0. Use it when a leveled table's levels overlap (after a bulk\n" +
			"load, or a level-reset), so that LCS does not compact everything again. It prints sstableofflinerelevel's\n" +
			"lines (\"For sstables in DIR:\", \"Current leveling:\", \"New leveling: \" or with --dry-run \"Potential\n" +
			"leveling: \", then Ln=count) and a summary; --json the level of each sstable before and after.\n" +
			"First, as Cassandra's tool does, the leftovers of unfinished transactions in the table's directories\n" +
			"are removed (not with --dry-run). Sstables whose last keys are equal, which Cassandra takes in no\n" +
			"particular order, are taken in the order of their names.\n\n" +
			"Only Statistics.db changes, and in it only the level and the stats component's CRC32, through\n" +
			"Statistics.db.tmp, fsync and rename. The node must be stopped: a process holding the table's files open\n" +
			"is named and the command refuses (--force overrides). A directory with an sstable that cannot be read\n" +
			"is not releveled.\n\n" +
			"Exit codes: 0 done, 2 an sstable could not be read or changed, no sstables, bad usage, or a live node.\n\n" +
			"Examples:\n" +
			"  sstabletool relevel --dry-run /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool relevel /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2\n" +
			"  sstabletool relevel --data /var/lib/cassandra/data shop orders --json",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the leveling it would make and change nothing"},
			dataFlag, forceFlag, recursiveFlag, jsonFlag,
		},
		Action: relevelAction,
	}, argSpec{min: 1, max: -1, what: "table directory"})
}

// relevelDir is one directory's releveling, as --json lists it.
type relevelDir struct {
	Dir      string    `json:"dir"`
	Current  []int     `json:"current"` // sstables per level now, L0 first
	New      []int     `json:"new"`     // after
	DryRun   bool      `json:"dry_run"`
	SSTables []mutated `json:"sstables"`
	Error    string    `json:"error,omitempty"`
}

// relevelReport is relevel's --json.
type relevelReport struct {
	Cleaned []cleanedLog `json:"cleaned_up"`
	Dirs    []relevelDir `json:"directories"`
}

func relevelAction(c *cli.Context) error {
	paths, err := tableTargets(c)
	if err != nil {
		return err
	}
	dry, js := c.Bool("dry-run"), c.Bool("json")
	say := func(line string) { fmt.Fprintln(stdout, line) }
	if js {
		say = func(string) {}
	}
	var sc *scan
	rep := &relevelReport{Cleaned: []cleanedLog{}, Dirs: []relevelDir{}}
	if dry {
		// A dry run changes nothing, leftovers included; the scan skips
		// what a transaction log marks as not live anyway.
		if sc, err = findSSTablesIn(c, paths); err != nil {
			return err
		}
	} else {
		pre, s, err := prepareInPlace(c, paths, say)
		if err != nil {
			return err
		}
		rep.Cleaned, sc = pre.Cleaned, s
	}
	failed := 0
	for _, dir := range sstableDirs(sc.found) {
		rd := relevelDir{Dir: dir, DryRun: dry, SSTables: []mutated{}}
		if err := relevelOne(sc, dir, &rd, say); err != nil {
			rd.Error = err.Error()
			fmt.Fprintf(stderr, "sstabletool: relevel: %s: %v\n", dir, err)
			failed++
		}
		rep.Dirs = append(rep.Dirs, rd)
	}
	if js {
		if err := writeJSON(rep); err != nil {
			return err
		}
	}
	if failed > 0 {
		return cli.Exit(fmt.Sprintf("%s not releveled", words.Plural(failed, "directory")), exitBadData)
	}
	return nil
}

// relevelOne relevels the sstables of one directory.
func relevelOne(sc *scan, dir string, rd *relevelDir, say func(string)) error {
	var ss []statsedit.Leveled
	for _, f := range sc.found {
		if d, _ := filepath.Abs(filepath.Dir(f.Path)); d != dir {
			continue
		}
		if f.Err != nil {
			return fmt.Errorf("Couldn't open sstable: %s", failureText(f.Path, f.Err))
		}
		l, err := statsedit.Open(f.Path)
		if err != nil {
			return fmt.Errorf("Couldn't open sstable: %s", failureText(f.Path, err))
		}
		if len(ss) > 0 && l.Partitioner.Name() != ss[0].Partitioner.Name() {
			return fmt.Errorf("%s has partitioner %s, %s has %s: not one table's sstables", f.Path, l.Partitioner.Name(), ss[0].Desc.Path(format.ComponentData), ss[0].Partitioner.Name())
		}
		ss = append(ss, l)
	}
	lv := statsedit.Relevel(ss, ss[0].Partitioner.CompareKeys)
	rd.Current, rd.New = lv.Current, lv.New
	say("For sstables in " + dir + ":")
	say("Current leveling:")
	for i, n := range lv.Current {
		say(fmt.Sprintf("L%d=%d", i, n))
	}
	if rd.DryRun {
		say("Potential leveling: ")
	} else {
		say("New leveling: ")
	}
	for i, n := range lv.New {
		say(fmt.Sprintf("L%d=%d", i, n))
	}
	changed := 0
	for i, s := range ss {
		to := lv.Levels[i]
		p := s.Desc.Path(format.ComponentData)
		before, err := statsedit.Read(s.Desc)
		if err != nil {
			return err
		}
		after := before
		after.Level = to
		res := &statsedit.Result{Path: s.Desc.Path(format.ComponentStatistics), Before: before, After: after}
		if !rd.DryRun && to != s.Level {
			r, err := statsedit.Mutate(nil, s.Desc, statsedit.Change{Level: &to})
			if err != nil {
				return err
			}
			res = r
		}
		if to != s.Level {
			changed++
		}
		rd.SSTables = append(rd.SSTables, mutated{SSTable: p, Result: res})
	}
	verb := "changed"
	if rd.DryRun {
		verb = "would change"
	}
	say(fmt.Sprintf("%s the level of %s of %d", verb, words.Plural(changed, "sstable"), len(ss)))
	return nil
}
