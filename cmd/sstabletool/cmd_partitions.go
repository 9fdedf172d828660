package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/sstable"
)

func init() {
	register(&cli.Command{
		Name:      "partitions",
		Usage:     "list partitions with key, token, offset, size, rows, cells and tombstones (like sstablepartitions)",
		ArgsUsage: "PATH...",
		Description: "Finds large partitions and tombstone-heavy ones. PATH is an sstable component or a data\n" +
			"directory (-r to recurse). Tokens come from the sstable's partitioner (Murmur3, Random or\n" +
			"ByteOrdered). Sizes are bytes of uncompressed Data.db.\n\n" +
			"Examples:\n" +
			"  sstabletool partitions -r /var/lib/cassandra/data/shop --min-size 64KiB        # large partitions of every table\n" +
			"  sstabletool partitions nc-1-big-Data.db --sort tombstones --json | jq '.[0]'",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "min-size", Usage: "only partitions of at least `SIZE` bytes (suffixes KiB, MiB, GiB)"},
			&cli.Int64Flag{Name: "min-rows", Usage: "only partitions with at least `N` rows"},
			&cli.Int64Flag{Name: "min-cells", Usage: "only partitions with at least `N` cells"},
			&cli.Int64Flag{Name: "min-tombstones", Usage: "only partitions with at least `N` tombstones"},
			&cli.StringFlag{Name: "sort", Value: "", Usage: "order by size|rows|tombstones|key (default: Data.db order)"},
			&cli.BoolFlag{Name: "csv", Usage: "print CSV"},
			&cli.BoolFlag{Name: "sizes-only", Usage: "step over rows by their sizes without walking cells: several times faster on big sstables; cells and tombstones print as -1"},
			jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, accessFlag, schemaFlag, tableFlag,
		},
		Action: partitionsAction,
	}, sstableArgs)
}

// partitionRow is one output line; JSON names are the documented ones.
type partitionRow struct {
	SSTable    string `json:"sstable"`
	Key        string `json:"key"`
	Token      string `json:"token"`
	Offset     int64  `json:"offset"`
	Size       int64  `json:"size"`
	Rows       int64  `json:"rows"`
	Cells      int64  `json:"cells"`
	Tombstones int64  `json:"tombstones"`
	Deletion   bool   `json:"deletion"`
}

func partitionsAction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	minSize, err := parseSize(c.String("min-size"))
	if err != nil {
		return usageError("--min-size: %v", err)
	}
	sortBy := c.String("sort")
	switch sortBy {
	case "", "size", "rows", "tombstones", "key":
	default:
		return usageError("--sort %q: expected size, rows, tombstones or key", sortBy)
	}
	// Read the thresholds once: a flag lookup walks the flag set.
	minRows, minCells, minTombstones := c.Int64("min-rows"), c.Int64("min-cells"), c.Int64("min-tombstones")
	if c.Bool("sizes-only") && (minCells > 0 || minTombstones > 0 || sortBy == "tombstones") {
		return usageError("--sizes-only does not count cells or tombstones: drop --min-cells, --min-tombstones and --sort tombstones, or --sizes-only")
	}
	// Without --sort, rows stream out as the scan finds them: a table with
	// millions of partitions needs no memory per partition.
	pr := newPartitionsPrinter(c, sc.total() > 1 && sortBy == "")
	var out []partitionRow
	err = sc.each(func(p string) error {
		s, err := openFound(c, p, sf)
		if err != nil {
			return err
		}
		defer s.Close()
		dataPath := s.Path("Data.db")
		prog := newProgress("partitions", s.Data.Length())
		defer prog.done()
		return s.ScanPartitions(sstable.ScanOptions{SkipCells: c.Bool("sizes-only")}, func(ps *sstable.PartitionSummary) error {
			prog.update(ps.Offset)
			// (With --sizes-only cells and tombstones are -1 and their
			// thresholds are refused above.)
			if ps.Size < minSize || ps.Rows < minRows || (ps.Cells >= 0 && (ps.Cells < minCells || ps.Tombstones < minTombstones)) {
				return nil
			}
			r := partitionRow{
				SSTable: dataPath, Key: keyString(s, ps.Key), Token: s.Partitioner.Token(ps.Key).String(),
				Offset: ps.Offset, Size: ps.Size, Rows: ps.Rows, Cells: ps.Cells, Tombstones: ps.Tombstones,
				Deletion: !ps.Deletion.IsLive(),
			}
			if sortBy != "" {
				out = append(out, r)
				return nil
			}
			return pr.row(&r)
		})
	}, pr.failed)
	if err != nil {
		return err
	}
	sortPartitions(out, sortBy)
	for i := range out {
		if err := pr.row(&out[i]); err != nil {
			return err
		}
	}
	if err := pr.finish(); err != nil {
		return err
	}
	return sc.err()
}

// partitionsPrinter writes rows as text, CSV or a JSON array, one at a time.
type partitionsPrinter struct {
	mode       string // "text", "csv", "json"
	perSSTable bool   // text: a "# path" line before each sstable's rows
	tw         *tabwriter.Writer
	cw         *csv.Writer
	n          int
	last       string
	jbuf       bytes.Buffer
	out        *bufio.Writer // stdout, buffered: tabwriter writes each cell separately
}

func newPartitionsPrinter(c *cli.Context, perSSTable bool) *partitionsPrinter {
	p := &partitionsPrinter{mode: "text", perSSTable: perSSTable, out: bufio.NewWriterSize(stdout, 64<<10)}
	switch {
	case c.Bool("json"):
		p.mode = "json"
	case c.Bool("csv"):
		p.mode = "csv"
		p.cw = csv.NewWriter(p.out)
		p.cw.Write([]string{"sstable", "key", "token", "offset", "size", "rows", "cells", "tombstones", "deletion"})
	default:
		p.tw = tabwriter.NewWriter(p.out, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(p.tw, "key\ttoken\toffset\tsize\trows\tcells\ttombstones\tdeletion\t")
	}
	return p
}

// textBlock is how many text rows share column widths: the tabwriter
// buffers until flushed, so an unbounded table would sit in memory.
const textBlock = 4096

func (p *partitionsPrinter) row(r *partitionRow) error {
	p.n++
	switch p.mode {
	case "json":
		return p.jsonEntry(r)
	case "csv":
		return p.cw.Write([]string{r.SSTable, r.Key, r.Token, i64(r.Offset), i64(r.Size), i64(r.Rows), i64(r.Cells), i64(r.Tombstones), strconv.FormatBool(r.Deletion)})
	}
	if p.perSSTable && r.SSTable != p.last {
		p.tw.Flush()
		fmt.Fprintf(p.out, "# %s\n", r.SSTable)
		p.last = r.SSTable
	}
	fmt.Fprintf(p.tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%v\t\n", r.Key, r.Token, r.Offset, r.Size, r.Rows, r.Cells, r.Tombstones, r.Deletion)
	if p.n%textBlock == 0 {
		return p.tw.Flush()
	}
	return nil
}

// failed lists an sstable that could not be read: an entry of the JSON
// array ({"sstable", "error"}); text and CSV leave it to stderr.
func (p *partitionsPrinter) failed(e sstableError) {
	if p.mode != "json" {
		return
	}
	p.n++
	p.jsonEntry(e)
}

// jsonEntry writes one element of the JSON array (p.n counts it already).
func (p *partitionsPrinter) jsonEntry(v any) error {
	p.jbuf.Reset()
	enc := json.NewEncoder(&p.jbuf)
	enc.SetEscapeHTML(false) // keys print as they are, like writeJSON
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	b := bytes.TrimSuffix(p.jbuf.Bytes(), []byte("\n"))
	sep := ",\n  "
	if p.n == 1 {
		sep = "[\n  "
	}
	_, err := fmt.Fprintf(p.out, "%s%s", sep, b)
	return err
}

func (p *partitionsPrinter) finish() error {
	var err error
	switch p.mode {
	case "json":
		end := "\n]\n"
		if p.n == 0 {
			end = "[]\n"
		}
		_, err = fmt.Fprint(p.out, end)
	case "csv":
		p.cw.Flush()
		err = p.cw.Error()
	default:
		err = p.tw.Flush()
	}
	if ferr := p.out.Flush(); err == nil {
		err = ferr
	}
	return err
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func sortPartitions(out []partitionRow, by string) {
	less := map[string]func(a, b *partitionRow) bool{
		"size":       func(a, b *partitionRow) bool { return a.Size > b.Size },
		"rows":       func(a, b *partitionRow) bool { return a.Rows > b.Rows },
		"tombstones": func(a, b *partitionRow) bool { return a.Tombstones > b.Tombstones },
		"key":        func(a, b *partitionRow) bool { return a.Key < b.Key },
	}[by]
	if less == nil {
		return
	}
	sort.SliceStable(out, func(i, j int) bool { return less(&out[i], &out[j]) })
}

// parseSize reads "123", "10KiB", "5MB", "1GiB".
func parseSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1000}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}} {
		if len(s) > len(u.suf) && s[len(s)-len(u.suf):] == u.suf {
			mult, s = u.m, s[:len(s)-len(u.suf)]
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return int64(v * float64(mult)), nil
}
