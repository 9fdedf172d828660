package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/export"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

func init() {
	register(&cli.Command{
		Name:      "dump",
		Usage:     "print the partitions, rows and cells of Data.db as sstabledump-compatible JSON",
		ArgsUsage: "PATH",
		Description: "PATH is any component of one sstable (e.g. nc-1-big-Data.db). Values are decoded with the\n" +
			"types of the sstable's serialization header; no schema or running node is needed.\n\n" +
			"Examples:\n" +
			"  sstabletool dump data/ks/t-1234/nc-1-big-Data.db\n" +
			"  sstabletool dump -k 42 -k 43 nc-1-big-Data.db      # only these partitions, found via Summary.db and Index.db\n" +
			"  sstabletool dump --jsonl nc-1-big-Data.db | jq -c .partition.key",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "dump only this partition `KEY` (repeatable; composite keys as a:b)"},
			&cli.StringSliceFlag{Name: "exclude-key", Aliases: []string{"x"}, Usage: "skip this partition `KEY` (repeatable)"},
			&cli.BoolFlag{Name: "raw-timestamps", Aliases: []string{"t"}, Usage: "print timestamps as numbers instead of ISO-8601"},
			&cli.BoolFlag{Name: "jsonl", Aliases: []string{"l"}, Usage: "one partition per line (JSON lines)"},
			&cli.BoolFlag{Name: "enumerate-keys", Aliases: []string{"e"}, Usage: "print only the partition keys"},
			accessFlag, schemaFlag,
		},
		Action: dumpAction,
	})
}

func dumpAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError("dump: give exactly one sstable (see --help)")
	}
	s, err := openSSTable(c, c.Args().First())
	if err != nil {
		return err
	}
	defer s.Close()
	exclude := map[string]bool{}
	for _, k := range c.StringSlice("exclude-key") {
		b, err := s.KeyType.FromString(k)
		if err != nil {
			return usageError("-x %q: %v", k, err)
		}
		exclude[string(b)] = true
	}
	d := export.NewDumper(stdout, s, export.Options{JSONLines: c.Bool("jsonl"), RawTimestamps: c.Bool("raw-timestamps")})
	if c.Bool("enumerate-keys") {
		return badData(enumerateKeys(c, s, exclude))
	}
	d.Begin()
	if keys := c.StringSlice("key"); len(keys) > 0 {
		for _, k := range keys {
			b, err := s.KeyType.FromString(k)
			if err != nil {
				return usageError("-k %q: %v", k, err)
			}
			if exclude[string(b)] {
				continue
			}
			e, ok, err := s.Find(b)
			if err != nil {
				return badData(err)
			}
			if !ok {
				continue
			}
			if err := dumpAt(s, d, e.Position); err != nil {
				return badData(err)
			}
		}
		return badData(d.End())
	}
	prog := newProgress("dump", s.Data.Length())
	defer prog.done()
	var skip func([]byte) bool
	if len(exclude) > 0 {
		skip = func(key []byte) bool { return exclude[string(key)] }
	}
	// All renders on every core, in order, and writes what came before
	// an error itself.
	if err := d.All(skip, prog.update); err != nil {
		return badData(err)
	}
	return badData(d.End())
}

func dumpAt(s *sstable.SSTable, d *export.Dumper, pos int64) error {
	var h rows.PartitionHeader
	dec, err := s.PartitionAt(pos, &h)
	if err != nil {
		return fmt.Errorf("partition at %d (from Index.db): %w", pos, err)
	}
	return d.Partition(&h, dec)
}

func enumerateKeys(c *cli.Context, s *sstable.SSTable, exclude map[string]bool) error {
	var keys [][]string
	err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		if !exclude[string(p.Key)] {
			keys = append(keys, []string{keyString(s, p.Key)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(keys)
}
