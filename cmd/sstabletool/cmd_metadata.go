package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
)

// metadataCommand is the metadata command.
func metadataCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "metadata",
		Usage:     "print what sstablemetadata shows: Statistics.db, TOC, compression, index and filter facts",
		ArgsUsage: "PATH...",
		Description: "PATH is any component of an sstable, or a data directory (all sstables in it; -r to recurse).\n" +
			"The fields and options are sstablemetadata's (Cassandra 4.1/5.0), with sstabletool's additions\n" +
			"(components, chunk length, index summary, bloom filter, BTI tries); a field the sstable's version\n" +
			"does not store is not printed. Times are UTC, in RFC 3339. -s reads every partition for the\n" +
			"widest, largest and tombstone-heaviest partitions and histograms of sizes and counts.\n" +
			"--json prints an array with one object per sstable, snake_case fields (version, partitioner,\n" +
			"min_timestamp, key_range, compression, header, scan with -s, ...), whatever the number of sstables.\n\n" +
			"Examples:\n" +
			"  sstabletool metadata nc-1-big-Data.db\n" +
			"  sstabletool metadata nc-1-big-Data.db -s                          # a full scan: widest and largest partitions\n" +
			"  sstabletool metadata nc-1-big-Data.db -g 864000                   # droppable tombstones as of 10 days ago\n" +
			"  sstabletool metadata nc-1-big-Data.db -t MILLISECONDS             # cell timestamps written in milliseconds\n" +
			"  sstabletool metadata nc-1-big-Data.db -c -u | less -R             # colors and unicode histogram bars\n" +
			"  sstabletool metadata /var/lib/cassandra/data/shop -r --json | jq '.[].version'   # every sstable of a keyspace",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "scan", Aliases: []string{"s"}, Usage: "read every partition: sizes, rows, cells, tombstones, the widest and largest partitions, and histograms"},
			&cli.Int64Flag{Name: "gc_grace_seconds", Aliases: []string{"g", "gc-grace-seconds"}, Usage: "estimate droppable tombstones as of `SECONDS` ago (the table's gc_grace_seconds)"},
			oneOf(&cli.StringFlag{Name: "timestamp_unit", Aliases: []string{"t", "timestamp-unit"}, Value: "MICROSECONDS", Usage: "the `UNIT` cell timestamps are written in, for their dates: NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS"},
				timeUnitNames()...).ignoringCase(),
			&cli.BoolFlag{Name: "colors", Aliases: []string{"c"}, Usage: "ANSI colors, when stdout is a terminal (CLICOLOR_FORCE=1 forces them)"},
			&cli.BoolFlag{Name: "unicode", Aliases: []string{"u"}, Usage: "draw histogram bars with unicode blocks"},
			accessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, schemaFlag, tableFlag,
		},
		Action: metadataAction,
	}, sstableArgs)
}

// useColors reports whether -c colors the output: where the one colour
// policy (theme.Detect: a terminal, NO_COLOR, CLICOLOR_FORCE) allows it.
func useColors(c *cli.Context) bool {
	return c.Bool("colors") && theme.Detect(stdout) > colorprofile.ASCII
}

// timeUnitNames are the names of inspect.TimeUnits, the shortest first:
// what -t takes.
func timeUnitNames() []string {
	names := slices.Collect(maps.Keys(inspect.TimeUnits))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(inspect.TimeUnits[a], inspect.TimeUnits[b]) })
	return names
}

func metadataAction(c *cli.Context) error {
	unit := inspect.TimeUnits[strings.ToUpper(c.String("timestamp_unit"))] // one of timeUnitNames: the flag checked it
	gc := c.Int64("gc_grace_seconds")
	if gc < 0 {
		return usageError("metadata: -g/--gc_grace_seconds %d: negative values are not allowed", gc)
	}
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	pr := metadataPrinter{w: stdout, style: style{color: useColors(c), unicode: c.Bool("unicode")}, unit: unit}
	all := []any{} // *inspect.Metadata or sstableError, in order
	err = sc.each(func(p string) error {
		s, err := openFound(c, p, sf)
		if err != nil {
			return err
		}
		defer s.Close()
		mo := inspect.MetadataOptions{GCGraceSeconds: gc}
		if sf != nil && sf.Resolves(s) {
			mo.Table, _ = sf.Table(s) // names the indexes' columns
		}
		m, err := inspect.ReadMetadataWith(s, mo)
		if err != nil {
			return err
		}
		if n, ok := schemaNames(sf, s); ok {
			m.Header.KeyColumns, m.Header.ClusteringColumns = n.PartitionKey, n.Clustering
		}
		if c.Bool("scan") {
			prog := newProgress("scanning", s.Data().Length())
			m.Scan, err = inspect.Scan(s, prog.update)
			prog.done()
			if err != nil {
				return err
			}
		}
		if c.Bool("json") {
			all = append(all, m)
		} else {
			pr.print(m)
		}
		return nil
	}, func(e sstableError) { all = append(all, e) })
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := writeJSON(all); err != nil {
			return err
		}
	}
	return sc.err()
}

// metadataPrinter prints sstablemetadata's fields, aligned, with its
// wording: "Field: value (comment)".
type metadataPrinter struct {
	w     io.Writer
	style style
	unit  time.Duration // of cell timestamps (-t)
}

const labelWidth = 36

func (pr metadataPrinter) field(name string, value any, comment string) {
	st := pr.style
	label := name + ":"
	if st.color {
		label = ansiBlue + name + ansiCyan + ":" + ansiReset
	}
	line := padRight(label, labelWidth) + " " + fmt.Sprint(value)
	if comment != "" {
		line += st.wrap(ansiWhite, " ("+comment+")")
	}
	fmt.Fprintln(pr.w, line)
}

func (pr metadataPrinter) section(name string) {
	if pr.style.color {
		fmt.Fprintln(pr.w, ansiBlue+name+ansiCyan+":"+ansiReset)
		return
	}
	fmt.Fprintln(pr.w, name+":")
}

func (pr metadataPrinter) print(m *inspect.Metadata) {
	if m.Scan != nil {
		// The scan's overview comes right after the SSTable line.
		fields := m.Describe(pr.unit)
		pr.field(fields[0].Name, fields[0].Value, fields[0].Comment)
		pr.scan(m.Scan)
		pr.fields(m, fields[1:])
	} else {
		pr.fields(m, m.Describe(pr.unit))
	}
	fmt.Fprintln(pr.w)
}

// fields prints the shared description, with sstablemetadata's histograms
// where it prints them.
func (pr metadataPrinter) fields(m *inspect.Metadata, fields []inspect.Field) {
	for _, f := range fields {
		switch f.Kind {
		case inspect.FieldValue:
			pr.field(f.Name, f.Value, f.Comment)
		case inspect.FieldHistograms:
			pr.histograms(m)
		}
	}
}

// histograms prints Statistics.db's three histograms as TermHistogram does.
func (pr metadataPrinter) histograms(m *inspect.Metadata) {
	pr.section("Estimated tombstone drop times")
	var drops []termBin
	for _, b := range m.TombstoneDropTimes {
		drops = append(drops, termBin{b.Time, b.Count})
	}
	termHistogram{title: "Drop Time", bins: drops, offsetName: func(t int64) string {
		return fmt.Sprintf("%d %s", t, pr.style.quiet(inspect.DateIn(t, time.Second)))
	}}.print(pr.w, pr.style)
	pr.section("Partition Size")
	pr.histogram(m.PartitionSize, "Size (bytes)", pr.bytesName)
	pr.section("Column Count")
	pr.histogram(m.CellCount, "Columns", countName)
}

func (pr metadataPrinter) bytesName(v int64) string {
	return fmt.Sprintf("%d %s", v, pr.style.quiet(words.ToByteString(v)))
}

func countName(v int64) string { return fmt.Sprint(v) }

// histogram prints an EstimatedHistogram as TermHistogram does: its
// non-empty buckets. Values above the largest bucket are dropped first,
// as Cassandra does when it loads Statistics.db.
func (pr metadataPrinter) histogram(h inspect.Histogram, title string, name func(int64) string) {
	pr.histogramOf(h, title, name, nil)
}

// scannedHistogram prints a histogram of exact figures: its percentiles
// are the histogram's own (buckets with a zero) and its min and max exact.
func (pr metadataPrinter) scannedHistogram(h inspect.Histogram, title string, name func(int64) string) {
	pr.histogramOf(h, title, name, []int64{h.P50, h.P75, h.P95, h.P98, h.P99, h.Min, h.Max})
}

func (pr metadataPrinter) histogramOf(h inspect.Histogram, title string, name func(int64) string, exact []int64) {
	var bins []termBin
	var over int64
	for _, b := range h.Buckets {
		if b.Offset == math.MaxInt64 {
			over += b.Count
			continue
		}
		bins = append(bins, termBin{b.Offset, b.Count})
	}
	termHistogram{title: title, bins: bins, offsetName: name, exact: exact}.print(pr.w, pr.style)
	if over > 0 {
		fmt.Fprintf(pr.w, "   (%s above the largest bucket left out, as Cassandra drops them)\n", words.Plural(over, "value"))
	}
}

// scan prints sstablemetadata's scanned overview, then the histograms of
// the scan.
func (pr metadataPrinter) scan(s *inspect.ScanInfo) {
	f, st := pr.field, pr.style
	f("Size", s.Size, "")
	f("Partitions", s.Partitions, "")
	f("Rows", s.Rows, "")
	f("Tombstones", s.Tombstones, "")
	f("Cells", s.Cells, "")
	entry := func(kv inspect.KeyValue) string {
		return st.wrap(ansiCyan, "[") + kv.Key + st.wrap(ansiCyan, "] ") + fmt.Sprint(kv.Value)
	}
	pr.section("Widest Partitions")
	for _, kv := range s.Widest {
		fmt.Fprintln(pr.w, "  "+entry(kv))
	}
	pr.section("Largest Partitions")
	for _, kv := range s.Largest {
		fmt.Fprintln(pr.w, "  "+entry(kv)+st.wrap(ansiWhite, " ("+words.ToByteString(kv.Value)+")"))
	}
	// sstablemetadata prints its tombstone leaders only when their lines
	// are longer than 10 characters in all.
	var leaders strings.Builder
	for _, kv := range s.TombstoneLeaders {
		leaders.WriteString("  " + entry(kv) + "\n")
	}
	if leaders.Len() > 10 {
		pr.section("Tombstone Leaders")
		fmt.Fprint(pr.w, leaders.String())
	}
	pr.section("Partition size (scanned)")
	pr.scannedHistogram(s.PartitionSize, "Size (bytes)", pr.bytesName)
	pr.section("Rows per partition (scanned)")
	pr.scannedHistogram(s.RowsPerPartition, "Rows", countName)
	pr.section("Cells per partition (scanned)")
	pr.scannedHistogram(s.CellsPerPartition, "Cells", countName)
	pr.section("Tombstones per partition (scanned)")
	pr.scannedHistogram(s.TombstonesPerPartition, "Tombstones", countName)
}
