package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/convert"
)

// savingsCompaction is savings --compaction: per table, the exact bytes a
// major compaction (convert --merge with the same options) would write,
// per component, against the inputs' total, and the reclaimed bytes by
// reason; with -r, every table and the node's totals.
func savingsCompaction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	comp, none, err := parseCompression(c)
	if err != nil {
		return err
	}
	a, err := rewriteAccess(c)
	if err != nil {
		return err
	}
	kib := c.Int("column-index-size")
	if c.IsSet("column-index-size") && (kib <= 0 || kib > 1<<21) {
		return usageError("--column-index-size %d: expected KiB between 1 and %d", kib, 1<<21)
	}
	rep := newSavingsReport()
	err = mergeEach(c, "estimated", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			where := g.dir
			if where == "" && len(g.found) > 0 {
				where = g.found[0].Path
			}
			rep.Errors = append(rep.Errors, sstableError{SSTable: where, Error: err.Error()})
			return err
		}
		defer closeTable(t)
		m, err := mergeOptions(c, t, sf)
		if err != nil {
			return err
		}
		ssts := t.SSTables()
		to := ssts[len(ssts)-1].Version() // what the newest was written in
		if c.IsSet("to") {
			if to, err = parseAnyVersion(c.String("to")); err != nil {
				return stop(usageError("--to: %v", err))
			}
		}
		prog := newProgress("savings --compaction "+t.Dir().Dir, t.DataLength())
		res, err := convert.EstimateMerge(t, convert.MergeOptions{To: to, Compression: comp, Uncompressed: none,
			ColumnIndexSize: kib << 10, Merge: m, Access: a, Progress: func(done, _ int64) { prog.update(done) }})
		prog.done()
		if err != nil {
			rep.Errors = append(rep.Errors, sstableError{SSTable: t.Dir().Dir, Error: err.Error()})
			return err
		}
		dir := t.Dir().Dir
		rep.add(res, dir, len(ssts))
		if !c.Bool("json") {
			fmt.Fprintf(stdout, "%s: %d sstables (%s) compacted to one %s sstable, %d partitions\n", dir, len(ssts), res.From, res.To, res.Partitions)
			printSavings(stdout, res.To+" compacted", append(slices.Clone(res.Components), res.Dropped...), res.DataUncompressed, res.Index, res.IndexFiles, nil)
			printReclaimed(res)
			fmt.Fprintln(stdout)
		}
		return nil
	})
	rep.finish()
	if c.Bool("json") {
		if werr := writeJSON(rep); werr != nil {
			return werr
		}
		return err
	}
	if rep.Total.SSTables > 0 && len(rep.SSTables) > 1 {
		fmt.Fprintf(stdout, "TOTAL (%d tables, %d sstables, %d partitions)\n", len(rep.SSTables), rep.Total.SSTables, rep.Total.Partitions)
		printSavings(stdout, "compacted", rep.Total.Components, rep.Total.DataUncompressed, rep.Total.Index, rep.Total.IndexFiles, nil)
		if rep.Total.Reclaimed != nil {
			printReclaimed(&convert.Result{Reclaimed: rep.Total.Reclaimed, DataUncompressed: rep.Total.DataUncompressed})
		}
		fmt.Fprintln(stdout)
		printGroups(stdout, "compacted", "BY TABLE (most saved first)", "keyspace.table", rep.Tables)
		fmt.Fprintln(stdout)
		printGroups(stdout, "compacted", "BY KEYSPACE", "keyspace", rep.Keyspaces)
	}
	return err
}

// printReclaimed lists the reasons of Data.db's reduction.
func printReclaimed(res *convert.Result) {
	r := res.Reclaimed
	if r == nil {
		return
	}
	total := res.DataUncompressed.Before - res.DataUncompressed.After
	fmt.Fprintf(stdout, "  reclaimed, by reason (Data.db uncompressed, %d bytes):\n", total)
	for _, line := range r.Reasons() {
		fmt.Fprintf(stdout, "    %-48s %12d %8s\n", line.Reason, line.Bytes, pct(line.Bytes, total))
	}
}
