package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/merge"
)

// dumpMerged is dump --merge: each table of the sstables given, merged
// and printed as one sstabledump document (with -r, one per table).
func dumpMerged(c *cli.Context, sf *inspect.SchemaSource) error {
	return mergeEach(c, "merged", func(g tableGroup) error {
		t, err := openTable(c, g, sf)
		if err != nil {
			return err
		}
		defer closeTable(t)
		return dumpTable(c, t, sf)
	})
}

func dumpTable(c *cli.Context, t *merge.Table, sf *inspect.SchemaSource) error {
	o, err := mergeOptions(c, t, sf)
	if err != nil {
		return err
	}
	first := t.SSTables()[0]
	excluded, err := parseKeys(first, "dump: -x", c.StringSlice("exclude-key"))
	if err != nil {
		return err
	}
	exclude := map[string]bool{}
	for _, b := range excluded {
		exclude[string(b)] = true
	}
	keys, err := parseKeys(first, "dump: -k", c.StringSlice("key"))
	if err != nil {
		return err
	}
	if c.Bool("enumerate-keys") {
		return enumerateMergedKeys(t, o, keys, exclude)
	}
	d := dump.NewTableDumper(stdout, t, dump.Options{JSONLines: c.Bool("jsonl"), RawTimestamps: c.Bool("raw-timestamps"),
		Debug: c.Bool("debug"), Now: func() time.Time { return time.Unix(o.Now, 0) }})
	d.Begin()
	if len(keys) > 0 {
		for _, k := range sortKeys(t, keys) {
			if exclude[string(k)] {
				continue
			}
			p, err := t.Get(k, o)
			if err != nil {
				d.Flush()
				return err
			}
			if p == nil {
				continue
			}
			if err := d.PartitionFrom(&p.Header, mergedRows{p}); err != nil {
				d.Flush()
				return err
			}
		}
		return d.End()
	}
	prog := newProgress("dump --merge", t.DataLength())
	defer prog.done()
	sc, err := t.Scan(o)
	if err != nil {
		return err
	}
	for {
		p, err := sc.Next()
		if err != nil {
			d.Flush()
			return err
		}
		if p == nil {
			return d.End()
		}
		if exclude[string(p.Header.Key)] {
			continue
		}
		prog.update(sc.Pos())
		if err := d.PartitionFrom(&p.Header, mergedRows{p}); err != nil {
			d.Flush()
			return err
		}
	}
}

// enumerateMergedKeys is -e with --merge: the keys of the partitions the
// merge writes (a partition whose every version is purged is not one).
func enumerateMergedKeys(t *merge.Table, o merge.Options, only [][]byte, exclude map[string]bool) error {
	first := t.SSTables()[0]
	keys := [][]string{}
	if len(only) > 0 {
		for _, k := range sortKeys(t, only) {
			p, err := t.Get(k, o)
			if err != nil {
				return err
			}
			if p != nil && !exclude[string(k)] {
				keys = append(keys, []string{keyString(first, k)})
			}
		}
		return writeJSON(keys)
	}
	sc, err := t.Scan(o)
	if err != nil {
		return err
	}
	for {
		p, err := sc.Next()
		if err != nil {
			return err
		}
		if p == nil {
			return writeJSON(keys)
		}
		if !exclude[string(p.Header.Key)] {
			keys = append(keys, []string{keyString(first, p.Header.Key)})
		}
	}
}
