package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/words"
)

// partitionsCommand is the partitions command.
func partitionsCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "partitions",
		Usage:     "list partitions with key, token, offset, size, rows, cells and tombstones (like sstablepartitions)",
		ArgsUsage: "PATH...",
		Description: "Finds large partitions and tombstone-heavy ones, with sstablepartitions' options. PATH is an\n" +
			"sstable component or a data directory (-r to recurse). Tokens come from the sstable's partitioner.\n" +
			"Sizes are bytes of uncompressed Data.db. Counts are sstablepartitions': rows and cells leave out\n" +
			"the static row; tombstones are row deletions, range tombstone markers, collection deletions,\n" +
			"tombstone cells, and rows and cells whose TTL has expired at -u (default: now); a partition\n" +
			"deletion shows in the deletion column. --json and --csv add each kind of tombstone.\n\n" +
			"With thresholds (-t, -w, -c, -o) a partition is listed when it reaches any of them, as in\n" +
			"sstablepartitions; without, every partition is. After each sstable's list comes sstablepartitions'\n" +
			"summary: percentiles of size, rows, cells and tombstones over all its partitions (but -x ones).\n\n" +
			"Examples:\n" +
			"  sstabletool partitions -r /var/lib/cassandra/data/shop -t 64KiB                # large partitions of every table\n" +
			"  sstabletool partitions nc-1-big-Data.db -o 1 -w 40                            # a tombstone, or 40 rows or more\n" +
			"  sstabletool partitions nc-1-big-Data.db --sort tombstones --json | jq '.[0]'\n" +
			"  sstabletool partitions nc-1-big-Data.db --sort cells -c 50\n" +
			"  sstabletool partitions nc-1-big-Data.db --sort token -m                       # CSV in token order\n" +
			"  sstabletool partitions nc-1-big-Data.db -k 1 -k 3                             # these partitions, found through the index\n" +
			"  sstabletool partitions nc-1-big-Data.db -x 0 -u 1700000000                    # TTLs as of that second; key 0 left out\n" +
			"  sstabletool partitions -r /var/lib/cassandra/data/shop -y                     # sizes only: skips cells, several times faster\n" +
			"  sstabletool partitions -r /var/lib/cassandra/data/shop -s -b -m               # snapshots and backups too, as CSV",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Aliases: []string{"k"}, Usage: "only this partition `KEY`, found through the partition index (repeatable; a key of several columns as a:b)"},
			&cli.StringSliceFlag{Name: "exclude-key", Aliases: []string{"x"}, Usage: "leave this partition `KEY` out of the list and the summary (repeatable)"},
			&cli.StringFlag{Name: "min-size", Aliases: []string{"t"}, Usage: "partition size threshold: `SIZE` in bytes, or with a unit (10KiB, 20MiB, 30GiB; also KB, MB, GB)"},
			&cli.Int64Flag{Name: "min-rows", Aliases: []string{"w"}, Usage: "partition row count threshold `N`"},
			&cli.Int64Flag{Name: "min-cells", Aliases: []string{"c"}, Usage: "partition cell count threshold `N`"},
			&cli.Int64Flag{Name: "min-tombstones", Aliases: []string{"o"}, Usage: "partition tombstone count threshold `N`"},
			&cli.Int64Flag{Name: "current-timestamp", Aliases: []string{"u"}, Usage: "`SECONDS` since the epoch at which TTLs count as expired (default: now)"},
			&cli.BoolFlag{Name: "partitions-only", Aliases: []string{"y", "sizes-only"}, Usage: "step over rows by their sizes without reading cells: several times faster; cells and tombstones print as -1, the summary shows sizes"},
			oneOf(&cli.StringFlag{Name: "sort", Value: "", Usage: "order by size|rows|cells|tombstones (largest first), key or token (default: Data.db order, which is token order)"},
				"size", "rows", "cells", "tombstones", "key", "token"),
			&cli.BoolFlag{Name: "csv", Aliases: []string{"m"}, Usage: "print CSV"},
			jsonFlag, recursiveFlag,
			&cli.BoolFlag{Name: "snapshots", Aliases: []string{"s"}, Usage: snapshotsFlag.Usage},
			&cli.BoolFlag{Name: "backups", Aliases: []string{"b"}, Usage: backupsFlag.Usage},
			accessFlag, schemaFlag, tableFlag,
		},
		Action: partitionsAction,
	}, sstableArgs)
}

// partitionRow is one output line; JSON names are the documented ones.
type partitionRow struct {
	SSTable string `json:"sstable"`
	Key     string `json:"key"`
	// KeyColumns is the key by column name, where the schema names the
	// key's columns.
	KeyColumns        map[string]string `json:"key_columns,omitempty"`
	Token             string            `json:"token"`
	Offset            int64             `json:"offset"`
	Size              int64             `json:"size"`
	Rows              int64             `json:"rows"`
	Cells             int64             `json:"cells"`
	Tombstones        int64             `json:"tombstones"`
	Deletion          bool              `json:"deletion"`
	RowTombstones     int64             `json:"row_tombstones"`
	RangeTombstones   int64             `json:"range_tombstones"`
	ComplexTombstones int64             `json:"complex_tombstones"`
	CellTombstones    int64             `json:"cell_tombstones"`
	RowTTLExpired     int64             `json:"row_ttl_expired"`
	CellTTLExpired    int64             `json:"cell_ttl_expired"`

	tok         token.Token // for --sort token
	partitioner string
}

// thresholds are sstablepartitions' -t -w -c -o: a partition is listed
// when it reaches any threshold given.
type thresholds struct {
	size, rows, cells, tombstones int64 // -1: not given
}

func (t thresholds) any() bool {
	return t.size >= 0 || t.rows >= 0 || t.cells >= 0 || t.tombstones >= 0
}

func (t thresholds) match(p *inspect.PartitionCounts) bool {
	if !t.any() {
		return true
	}
	return (t.size >= 0 && p.Size >= t.size) || (t.rows >= 0 && p.Rows >= t.rows) ||
		(t.cells >= 0 && p.Cells >= t.cells) || (t.tombstones >= 0 && p.Tombstones() >= t.tombstones)
}

func partitionsAction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	th := thresholds{-1, -1, -1, -1}
	if c.IsSet("min-size") {
		if th.size, err = parseSize(c.String("min-size")); err != nil {
			return usageError("partitions: -t/--min-size: %v", err)
		}
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"min-rows", &th.rows}, {"min-cells", &th.cells}, {"min-tombstones", &th.tombstones}} {
		if c.IsSet(f.name) {
			if *f.dst = c.Int64(f.name); *f.dst < 0 {
				return usageError("partitions: --%s %d: negative values are not allowed", f.name, *f.dst)
			}
		}
	}
	opts := inspect.CountOptions{Now: time.Now().Unix(), PartitionsOnly: c.Bool("partitions-only")}
	if c.IsSet("current-timestamp") {
		if opts.Now = c.Int64("current-timestamp"); opts.Now < 0 {
			return usageError("partitions: -u/--current-timestamp %d: negative values are not allowed", opts.Now)
		}
	}
	sortBy := c.String("sort") // one of the flag's values, or "" for Data.db order
	if opts.PartitionsOnly && (th.cells >= 0 || th.tombstones >= 0 || sortBy == "cells" || sortBy == "tombstones") {
		return usageError("partitions: -y/--partitions-only does not count cells or tombstones: drop -c, -o and --sort cells|tombstones, or -y")
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	// Without --sort, rows stream out as the scan finds them: a table with
	// millions of partitions needs no memory per partition.
	pr := newPartitionsPrinter(c, sc.total() > 1, sortBy == "", opts.PartitionsOnly)
	var out []partitionRow
	var summaries []*sstableSummary
	filtered := th.any() || len(c.StringSlice("key")) > 0 || len(c.StringSlice("exclude-key")) > 0
	err = sc.each(func(p string) error {
		s, err := openFound(c, p, sf)
		if err != nil {
			return err
		}
		defer s.Close()
		excluded, err := tableKeys(s, "partitions: -x", c.StringSlice("exclude-key"), sc.total() > 1)
		if err != nil {
			return stop(err)
		}
		exclude := map[string]bool{}
		for _, k := range excluded {
			exclude[string(k)] = true
		}
		keys, err := tableKeys(s, "partitions: -k", c.StringSlice("key"), sc.total() > 1)
		if err != nil {
			return stop(err)
		}
		if len(keys) == 0 && len(c.StringSlice("key")) > 0 {
			return nil // none of the keys is one of this table's
		}
		var keyNames []string
		var table *cqltype.TableSchema // names the indexes' columns
		if n, ok := schemaNames(sf, s); ok {
			keyNames = n.PartitionKey
			table, _ = sf.Table(s)
		}
		sum := &sstableSummary{path: s.Path("Data.db"), stats: inspect.NewPartitionStats(), listKeys: filtered, indexes: inspect.IndexesOf(s, table)}
		if err := pr.begin(sum.path); err != nil {
			return err
		}
		// Partitions are counted (and their rows made) on every core,
		// segment by segment; the statistics, whose minima depend on the
		// order, and the output take them in Data.db order.
		count := func(h *rows.PartitionHeader, dec *rows.Decoder, b *partitionBatch) error {
			p := b.next()
			if err := inspect.CountPartition(h, dec, opts, &p.counts); err != nil {
				b.drop()
				return err
			}
			p.counts.Key = nil // the header's, valid only until the next one
			if p.excluded = exclude[string(h.Key)]; !p.excluded && th.match(&p.counts) {
				p.matched = true
				p.row = newPartitionRow(s, sum.path, h.Key, keyNames, &p.counts, opts.PartitionsOnly)
			}
			return nil
		}
		take := func(b *partitionBatch) error {
			for i := range b.parts {
				p := &b.parts[i]
				if p.excluded {
					continue
				}
				sum.stats.Add(&p.counts)
				if !p.matched {
					continue
				}
				sum.match(p.row.Key)
				if sortBy != "" {
					out = append(out, p.row)
				} else if err := pr.row(&p.row); err != nil {
					return err
				}
			}
			return nil
		}
		if len(keys) > 0 {
			var b partitionBatch
			err = eachKey(s, keys, func(h *rows.PartitionHeader, dec *rows.Decoder) error {
				b.reset()
				if err := count(h, dec, &b); err != nil {
					return err
				}
				return take(&b)
			})
		} else {
			prog := newProgress("partitions", s.Data().Length())
			err = sstable.Segmented(s, sstable.SegmentOptions{}, (*partitionBatch).reset, nil, count,
				func(b *partitionBatch) error {
					if len(b.parts) > 0 {
						prog.update(b.parts[0].counts.Offset)
					}
					return take(b)
				})
			prog.done()
		}
		if err != nil {
			return err
		}
		if sortBy != "" {
			summaries = append(summaries, sum)
			return nil
		}
		return pr.summary(sum)
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
	for _, sum := range summaries {
		if err := pr.summary(sum); err != nil {
			return err
		}
	}
	if err := pr.finish(); err != nil {
		return err
	}
	return sc.err()
}

// partitionBatch is what the workers of a partitions scan found in one
// segment of Data.db, in order.
type partitionBatch struct{ parts []countedPartition }

// countedPartition is one partition of a batch: its counts (Key unset),
// and, when it is listed, its row.
type countedPartition struct {
	counts   inspect.PartitionCounts
	excluded bool // by -x: neither counted in the summary nor listed
	matched  bool // reaches a threshold (or none is given): row is set
	row      partitionRow
}

func (b *partitionBatch) reset() { b.parts = b.parts[:0] }

// next appends a partition to fill.
func (b *partitionBatch) next() *countedPartition {
	b.parts = append(b.parts, countedPartition{})
	return &b.parts[len(b.parts)-1]
}

// drop removes the last partition (one whose counting failed).
func (b *partitionBatch) drop() { b.parts = b.parts[:len(b.parts)-1] }

func newPartitionRow(s *sstable.SSTable, path string, key []byte, keyNames []string, p *inspect.PartitionCounts, partitionsOnly bool) partitionRow {
	tok := s.Partitioner().Token(key)
	r := partitionRow{
		SSTable: path, Key: keyString(s, key), Token: tok.String(),
		Offset: p.Offset, Size: p.Size, Rows: p.Rows, Cells: p.Cells, Tombstones: p.Tombstones(),
		Deletion: !p.Live, RowTombstones: p.RowTombstones, RangeTombstones: p.RangeTombstones,
		ComplexTombstones: p.ComplexTombstones, CellTombstones: p.CellTombstones,
		RowTTLExpired: p.RowTTLExpired, CellTTLExpired: p.CellTTLExpired,
		tok: tok, partitioner: s.Partitioner().Name(),
	}
	if keyNames != nil {
		parts := inspect.FormatKeyParts(s.KeyType(), key)
		if len(parts) == len(keyNames) {
			r.KeyColumns = make(map[string]string, len(parts))
			for i, n := range keyNames {
				r.KeyColumns[n] = parts[i]
			}
		}
	}
	if partitionsOnly {
		r.Cells, r.Tombstones, r.RowTombstones, r.RangeTombstones, r.ComplexTombstones, r.CellTombstones, r.RowTTLExpired, r.CellTTLExpired = -1, -1, -1, -1, -1, -1, -1, -1
	}
	return r
}

// tableKeys parses the keys of -k or -x for one sstable. With one sstable a
// key its partition key type cannot read is a usage error; in a scan of
// several, tables differ, and such a key is left out for this one (said on
// stderr).
func tableKeys(s *sstable.SSTable, flag string, ks []string, several bool) ([][]byte, error) {
	if !several {
		return parseKeys(s, flag, ks)
	}
	var out [][]byte
	for _, k := range ks {
		b, err := parseKey(s, strings.TrimPrefix(flag, "partitions: "), k)
		if err != nil {
			fmt.Fprintf(stderr, "sstabletool: %s: %v; not a key of this table, left out for it\n", s.Path("Data.db"), err)
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// eachKey visits the partitions of keys, found through the partition index,
// in Data.db order and once each.
func eachKey(s *sstable.SSTable, keys [][]byte, fn func(h *rows.PartitionHeader, dec *rows.Decoder) error) error {
	positions, err := s.FindPositions(keys)
	if err != nil {
		return err
	}
	var h rows.PartitionHeader
	for _, pos := range positions {
		dec, err := s.PartitionAt(pos, &h)
		if err != nil {
			return fmt.Errorf("partition at %d (from the partition index): %w", pos, err)
		}
		if err := fn(&h, dec); err != nil {
			return err
		}
	}
	return nil
}

// sstableSummary is what sstablepartitions prints after an sstable's
// partitions.
type sstableSummary struct {
	path     string
	stats    *inspect.PartitionStats
	matches  int64
	listKeys bool // name the matching keys (only when something filtered them)
	keys     []string
	// indexes are the SAI and SASI files beside the sstable, whose bytes
	// are said apart from the partitions'.
	indexes []inspect.Index
}

func (s *sstableSummary) match(key string) {
	s.matches++
	if s.listKeys {
		s.keys = append(s.keys, key)
	}
}

// partitionsPrinter writes rows as text, CSV or a JSON array, one at a
// time, and in text each sstable's summary.
type partitionsPrinter struct {
	mode           string // "text", "csv", "json"
	multi          bool   // several sstables
	streaming      bool   // rows of one sstable at a time (no --sort)
	partitionsOnly bool
	tw             *textTable
	cw             *csv.Writer
	n              int
	header         bool // the text table's header is out
	sstables       int  // begun
	summaries      int  // printed
	jbuf           bytes.Buffer
	out            *bufio.Writer // stdout, buffered
}

// textHeader is the text table's header row.
var textHeader = []string{"key", "token", "offset", "size", "rows", "cells", "tombstones", "deletion"}

var csvHeader = []string{"sstable", "key", "token", "offset", "size", "rows", "cells", "tombstones", "deletion",
	"row_tombstones", "range_tombstones", "complex_tombstones", "cell_tombstones", "row_ttl_expired", "cell_ttl_expired"}

func newPartitionsPrinter(c *cli.Context, multi, streaming, partitionsOnly bool) *partitionsPrinter {
	p := &partitionsPrinter{mode: "text", multi: multi, streaming: streaming, partitionsOnly: partitionsOnly,
		out: bufio.NewWriterSize(stdout, 64<<10)}
	switch {
	case c.Bool("json"):
		p.mode = "json"
	case c.Bool("csv"):
		p.mode = "csv"
		p.cw = csv.NewWriter(p.out)
		p.cw.Write(csvHeader)
	default:
		p.tw = newTextTable(p.out, len(textHeader))
	}
	return p
}

// textBlock is how many text rows share column widths: the table
// buffers until flushed, so an unbounded table would sit in memory.
const textBlock = 4096

// begin starts an sstable: in text, streaming, a "# path" line when there
// are several, and a table of its own.
func (p *partitionsPrinter) begin(path string) error {
	if p.mode != "text" || !p.streaming {
		return nil
	}
	// Rows of an sstable whose scan failed half-way go out with it.
	if err := p.tw.Flush(); err != nil {
		return err
	}
	if p.sstables++; p.sstables > 1 {
		fmt.Fprintln(p.out)
	}
	if p.multi {
		if _, err := fmt.Fprintf(p.out, "# %s\n", path); err != nil {
			return err
		}
	}
	p.header = false
	return nil
}

func (p *partitionsPrinter) row(r *partitionRow) error {
	p.n++
	switch p.mode {
	case "json":
		return p.jsonEntry(r)
	case "csv":
		return p.cw.Write([]string{r.SSTable, r.Key, r.Token, i64(r.Offset), i64(r.Size), i64(r.Rows), i64(r.Cells), i64(r.Tombstones), strconv.FormatBool(r.Deletion),
			i64(r.RowTombstones), i64(r.RangeTombstones), i64(r.ComplexTombstones), i64(r.CellTombstones), i64(r.RowTTLExpired), i64(r.CellTTLExpired)})
	}
	if !p.header {
		for _, h := range textHeader {
			p.tw.cell(h)
		}
		p.tw.endRow()
		p.header = true
	}
	p.tw.cell(r.Key)
	p.tw.cell(r.Token)
	for _, v := range [...]int64{r.Offset, r.Size, r.Rows, r.Cells, r.Tombstones} {
		p.tw.int(v)
	}
	p.tw.cell(strconv.FormatBool(r.Deletion))
	p.tw.endRow()
	if p.n%textBlock == 0 {
		return p.tw.Flush()
	}
	return nil
}

// summary prints, in text, what sstablepartitions prints after an
// sstable's partitions (printSummary): the matches, then approximate
// percentiles from its histograms and exact minima and maxima.
func (p *partitionsPrinter) summary(sum *sstableSummary) error {
	if p.mode != "text" {
		return nil
	}
	if err := p.tw.Flush(); err != nil {
		return err
	}
	w := p.out
	if p.header || (!p.streaming && p.summaries > 0) {
		fmt.Fprintln(w)
	}
	p.summaries++
	fmt.Fprintf(w, "Summary of %s:\n", sum.path)
	if sum.matches > 0 {
		verb := "match"
		if sum.matches == 1 {
			verb = "matches"
		}
		fmt.Fprintf(w, "  %s %s\n", words.Plural(sum.matches, "partition"), verb)
		if sum.listKeys {
			fmt.Fprint(w, "  Keys:")
			for _, k := range sum.keys {
				fmt.Fprint(w, " "+summaryKey(k))
			}
			fmt.Fprintln(w)
		}
	}
	st := sum.stats
	pct := func(h stats.EstimatedHistogram, q float64) string {
		v, err := h.Percentile(q)
		if err != nil {
			return "overflow"
		}
		return strconv.FormatInt(v, 10)
	}
	size := func(q float64) string {
		v, err := st.Size.Percentile(q)
		if err != nil {
			return "overflow"
		}
		return words.PrettyMemory(v, " ")
	}
	if p.partitionsOnly {
		fmt.Fprintf(w, "         %20s\n", "Partition size")
	} else {
		fmt.Fprintf(w, "         %20s %20s %20s %20s\n", "Partition size", "Row count", "Cell count", "Tombstone count")
	}
	line := func(label, size, rows, cells, tombstones string) {
		if p.partitionsOnly {
			fmt.Fprintf(w, "  %-5s  %20s\n", label, size)
			return
		}
		fmt.Fprintf(w, "  %-5s  %20s %20s %20s %20s\n", label, size, rows, cells, tombstones)
	}
	for _, q := range []struct {
		label string
		q     float64
	}{{"~p50", .5}, {"~p75", .75}, {"~p90", .90}, {"~p95", .95}, {"~p99", .99}, {"~p999", .999}} {
		line(q.label, size(q.q), pct(st.Rows, q.q), pct(st.Cells, q.q), pct(st.Tombstones, q.q))
	}
	line("min", words.PrettyMemory(st.MinSize, " "), i64(st.MinRows), i64(st.MinCells), i64(st.MinTombstones))
	line("max", words.PrettyMemory(st.MaxSize, " "), i64(st.MaxRows), i64(st.MaxCells), i64(st.MaxTombstones))
	_, err := fmt.Fprintf(w, "  count  %20d\n", st.Count())
	if err != nil || len(sum.indexes) == 0 {
		return err
	}
	var ixs []string
	for _, ix := range sum.indexes {
		ixs = append(ixs, fmt.Sprintf("%s %s", ix.Label(), words.PrettyMemory(ix.Bytes, " ")))
	}
	_, err = fmt.Fprintf(w, "  Index files (%s, not in the partitions' sizes): %s\n", words.PrettyMemory(inspect.IndexBytes(sum.indexes), " "), strings.Join(ixs, "; "))
	return err
}

// summaryKey quotes a key holding a space the way sstablepartitions'
// summary does (maybeEscapeKeyForSummary).
func summaryKey(k string) string {
	if !strings.Contains(k, " ") {
		return k
	}
	return `"` + strings.ReplaceAll(k, `"`, `""`) + `"`
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

// sortPartitions orders rows for --sort: counts largest first, keys and
// tokens ascending; ties keep Data.db order.
func sortPartitions(out []partitionRow, by string) {
	less := map[string]func(a, b *partitionRow) bool{
		"size":       func(a, b *partitionRow) bool { return a.Size > b.Size },
		"rows":       func(a, b *partitionRow) bool { return a.Rows > b.Rows },
		"cells":      func(a, b *partitionRow) bool { return a.Cells > b.Cells },
		"tombstones": func(a, b *partitionRow) bool { return a.Tombstones > b.Tombstones },
		"key":        func(a, b *partitionRow) bool { return a.Key < b.Key },
		"token": func(a, b *partitionRow) bool {
			if a.partitioner != b.partitioner {
				return a.partitioner < b.partitioner
			}
			return a.tok.Compare(b.tok) < 0
		},
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
