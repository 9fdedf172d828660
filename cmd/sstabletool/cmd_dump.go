package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
)

// dumpCommand is the dump command.
func dumpCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "dump",
		Usage:     "print the partitions, rows and cells of Data.db as sstabledump-compatible JSON",
		ArgsUsage: "PATH | --merge PATHS|DIR",
		Description: "PATH is any component of one sstable (e.g. nc-1-big-Data.db). Values are decoded with the\n" +
			"types of the sstable's serialization header; no schema or running node is needed. The output is\n" +
			"JSON (--json is accepted and changes nothing); -d prints sstabledump -d's one line per row instead:\n" +
			"\"[key]@position\" and the row, marker or partition deletion as Cassandra's toString shows it\n" +
			"(not JSON, so -d refuses --json, --jsonl and -e).\n" +
			"A partition key of several columns is given whole, as a:b (a ':' inside a value as \\:).\n" +
			"-k's keys are found through the partition index and checked against Data.db; where the index is\n" +
			"damaged the lookup says so on stderr and scans Data.db instead, so -k and -e -k always agree.\n\n" +
			"--merge reads every sstable given (files, or a table's data directory) as one table and prints\n" +
			"what a major compaction at --now would write, in token order: overwritten and shadowed data\n" +
			"dropped, expired cells written as tombstones, and the tombstones that remain; --purge also drops\n" +
			"what the compaction would purge (deleted more than --gc-grace seconds before --now). Positions\n" +
			"are in the newest sstable holding the partition or row; sstabletool explain says where each\n" +
			"value came from. With -r each table directory merges on its own.\n\n" +
			"Examples:\n" +
			"  sstabletool dump nc-1-big-Data.db\n" +
			"  sstabletool dump nc-1-big-Data.db -k 2 -k 3                        # only these partitions, found via Summary.db and Index.db\n" +
			"  sstabletool dump nc-1-big-Data.db -x 0 -x 1                        # all partitions but these\n" +
			"  sstabletool dump --jsonl nc-1-big-Data.db | jq -c .partition.key\n" +
			"  sstabletool dump nc-1-big-Data.db --json -t                        # timestamps as numbers\n" +
			"  sstabletool dump nc-1-big-Data.db -d -k 1                          # one line per row, as sstabledump -d\n" +
			"  sstabletool dump nc-1-big-Data.db -e --schema shop.cql             # keys only; types checked against DESCRIBE KEYSPACE shop\n" +
			"  sstabletool dump --merge /var/lib/cassandra/data/shop/orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2/  # as a major compaction would write it now\n" +
			"  sstabletool dump --merge --now 2024-05-01T00:00:00Z --purge --gc-grace 3600 -k 2 .   # as of a date, purged, one partition\n" +
			"  sstabletool dump --merge -r /var/lib/cassandra/data/shop          # each table of keyspace shop, merged on its own",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "dump only this partition `KEY` (repeatable; composite keys as a:b)"},
			&cli.StringSliceFlag{Name: "exclude-key", Aliases: []string{"x"}, Usage: "skip this partition `KEY` (repeatable)"},
			&cli.BoolFlag{Name: "raw-timestamps", Aliases: []string{"t"}, Usage: "print timestamps as numbers instead of ISO-8601"},
			&cli.BoolFlag{Name: "jsonl", Aliases: []string{"l"}, Usage: "one partition per line (JSON lines)"},
			&cli.BoolFlag{Name: "enumerate-keys", Aliases: []string{"e"}, Usage: "print only the partition keys, as sstabledump -e (with -k only the given keys present; -x leaves keys out)"},
			&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "one line per row, marker and partition deletion, as sstabledump -d prints them (CQL row per line internal representation)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON: the default; accepted so that --json works with every command"},
			&cli.BoolFlag{Name: "merge", Aliases: []string{"m"}, Usage: "merge the sstables given into one table, as a major compaction would (see above)"},
			nowFlag, purgeFlag, gcGraceFlag,
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "with --merge: descend into subdirectories and merge each table directory on its own"},
			accessFlag, schemaFlag, tableFlag,
		},
		Action: dumpAction,
	}, sstableArgs)
}

func dumpAction(c *cli.Context) error {
	if c.Bool("debug") {
		for _, f := range []string{"jsonl", "enumerate-keys", "json"} {
			if c.Bool(f) {
				return usageError("dump: -d prints sstabledump -d's lines, not JSON: drop --%s or -d", f)
			}
		}
	}
	if !c.Bool("merge") {
		for _, f := range []string{"now", "purge", "gc-grace", "recursive"} {
			if c.IsSet(f) {
				return usageError("dump: --%s works with --merge (see sstabletool dump --help)", f)
			}
		}
		if err := oneSSTable.check(c); err != nil {
			return err
		}
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	if c.Bool("merge") {
		return dumpMerged(c, sf)
	}
	s, err := openSSTable(c, c.Args().First(), sf)
	if err != nil {
		return err
	}
	defer s.Close()
	excluded, err := parseKeys(s, "dump: -x", c.StringSlice("exclude-key"))
	if err != nil {
		return err
	}
	exclude := map[string]bool{}
	for _, b := range excluded {
		exclude[string(b)] = true
	}
	keys, err := parseKeys(s, "dump: -k", c.StringSlice("key"))
	if err != nil {
		return err
	}
	if c.Bool("enumerate-keys") {
		return badData(enumerateKeys(s, keys, exclude))
	}
	out := jsonOut{dump.NewDumper(stdout, s, dump.Options{JSONLines: c.Bool("jsonl"), RawTimestamps: c.Bool("raw-timestamps"), Debug: c.Bool("debug")})}
	if len(keys) > 0 {
		// Partitions print in Data.db order whatever the order of -k, and
		// once each, as sstabledump's scanner over the keys' tokens does.
		var want [][]byte
		for _, b := range keys {
			if !exclude[string(b)] {
				want = append(want, b)
			}
		}
		positions, err := s.FindPositions(want)
		if err != nil {
			return badData(err)
		}
		out.begin()
		for _, pos := range positions {
			if err := dumpAt(s, out, pos); err != nil {
				out.flush()
				return badData(err)
			}
		}
		return badData(out.end())
	}
	out.begin()
	prog := newProgress("dump", s.Data().Length())
	defer prog.done()
	var skip func([]byte) bool
	if len(exclude) > 0 {
		skip = func(key []byte) bool { return exclude[string(key)] }
	}
	// All renders on every core, in order, and writes what came before an
	// error itself.
	if err := out.d.All(skip, prog.update); err != nil {
		return badData(err)
	}
	return badData(out.end())
}

// jsonOut is dump's output: sstabledump's JSON or its -d lines, both
// rendered by dump.Dumper.
type jsonOut struct{ d *dump.Dumper }

func (o jsonOut) begin() { o.d.Begin() }
func (o jsonOut) partition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	return o.d.Partition(h, dec)
}
func (o jsonOut) end() error { return o.d.End() }
func (o jsonOut) flush()     { o.d.Flush() }

func dumpAt(s *sstable.SSTable, out jsonOut, pos int64) error {
	var h rows.PartitionHeader
	dec, err := s.PartitionAt(pos, &h)
	if err != nil {
		return fmt.Errorf("partition at %d (from the partition index): %w", pos, err)
	}
	return out.partition(&h, dec)
}

// enumerateKeys prints the partition keys in Data.db order, as
// sstabledump -e does; with -k only those of the given keys the sstable
// holds (sstabledump ignores -k and -x with -e; no argument is ignored
// here), without -x's.
func enumerateKeys(s *sstable.SSTable, only [][]byte, exclude map[string]bool) error {
	var want map[string]bool
	if len(only) > 0 {
		want = map[string]bool{}
		for _, k := range only {
			want[string(k)] = true
		}
	}
	keys := [][]string{}
	err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		if !exclude[string(p.Key)] && (want == nil || want[string(p.Key)]) {
			keys = append(keys, []string{keyString(s, p.Key)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(keys)
}
