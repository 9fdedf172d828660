package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format/bti/trie"
	"github.com/sstabletool/sstabletool/inspect"
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
			&cli.StringFlag{Name: "timestamp_unit", Aliases: []string{"t", "timestamp-unit"}, Value: "MICROSECONDS", Usage: "the `UNIT` cell timestamps are written in, for their dates: NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS"},
			&cli.BoolFlag{Name: "colors", Aliases: []string{"c"}, Usage: "ANSI colors, when stdout is a terminal (CLICOLOR_FORCE=1 forces them)"},
			&cli.BoolFlag{Name: "unicode", Aliases: []string{"u"}, Usage: "draw histogram bars with unicode blocks"},
			accessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, schemaFlag, tableFlag,
		},
		Action: metadataAction,
	}, sstableArgs)
}

// useColors reports whether -c colors the output: on a terminal, or when
// CLICOLOR_FORCE asks for them anyway.
func useColors(c *cli.Context) bool {
	if !c.Bool("colors") {
		return false
	}
	if f := os.Getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := stdout.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func metadataAction(c *cli.Context) error {
	unit, ok := timeUnits[strings.ToUpper(c.String("timestamp_unit"))]
	if !ok {
		return usageError("metadata: -t/--timestamp_unit %q: expected NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS, MINUTES, HOURS or DAYS", c.String("timestamp_unit"))
	}
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
		m, err := inspect.ReadMetadataWith(s, inspect.MetadataOptions{GCGraceSeconds: gc})
		if err != nil {
			return err
		}
		if c.Bool("scan") {
			prog := newProgress("scanning", s.Data.Length())
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

// deletionComment is SSTableMetadataViewer.deletion: the date of a local
// deletion time, or "no tombstones" for none.
func deletionComment(v int64) string {
	if v == 0 || v == math.MaxInt64 || v == math.MaxInt32 {
		return "no tombstones"
	}
	return dateIn(v, time.Second)
}

func (pr metadataPrinter) print(m *inspect.Metadata) {
	v := m.Flags()
	f := pr.field
	f("SSTable", m.Path, "")
	if m.Scan != nil {
		pr.scan(m.Scan)
	}
	f("Version", fmt.Sprintf("%s (%s format)", m.Version, m.Format), "")
	f("Generation", m.Generation, "")
	f("Components", strings.Join(m.Components, ", "), "")
	f("Partitioner", m.Partitioner, "")
	f("Bloom Filter FP chance", javaDouble(m.BloomFilterFPChance), "")
	f("Minimum timestamp", m.MinTimestamp, dateIn(m.MinTimestamp, pr.unit))
	f("Maximum timestamp", m.MaxTimestamp, dateIn(m.MaxTimestamp, pr.unit))
	f("Duration", durationString(m.MaxTimestamp-m.MinTimestamp), "")
	f("SSTable min local deletion time", m.MinLocalDeletionTime, deletionComment(m.MinLocalDeletionTime))
	f("SSTable max local deletion time", m.MaxLocalDeletionTime, deletionComment(m.MaxLocalDeletionTime))
	if c := m.Compression; c != nil {
		f("Compressor", c.Compressor, "")
		f("Compression ratio", javaDouble(c.Ratio), "")
		f("Chunk length", c.ChunkLength, fmt.Sprintf("%s of %d bytes", plural(c.Chunks, "chunk"), c.DataLength))
	} else {
		f("Compressor", "-", "uncompressed; CRC.db checksums")
	}
	f("Data.db on disk / uncompressed", fmt.Sprintf("%d / %d bytes", m.DataSize, m.UncompressedDataSize), "")
	f("TTL min", m.MinTTL, durationWords(m.MinTTL))
	f("TTL max", m.MaxTTL, durationWords(m.MaxTTL))
	if k := m.KeyRange; k != nil {
		f("First token", k.FirstToken, k.First)
		f("Last token", k.LastToken, k.Last)
	}
	if m.LegacyMinClustering != nil {
		f("minClusteringValues", fmt.Sprint(m.LegacyMinClustering), "")
		f("maxClusteringValues", fmt.Sprint(m.LegacyMaxClustering), "")
	}
	if m.CoveredClustering != nil {
		f("Covered clusterings", m.CoveredClustering.Start+" .. "+m.CoveredClustering.End, "")
	}
	f("Estimated droppable tombstones", javaDouble(m.EstimatedDroppable), "")
	f("SSTable Level", m.SSTableLevel, "")
	f("Repaired at", m.RepairedAt, dateIn(m.RepairedAt, time.Millisecond))
	if v.HasOriginatingHostID {
		f("Originating host id", orDashes(m.OriginatingHostID), "")
	}
	if v.HasPendingRepair {
		f("Pending repair", orDashes(m.PendingRepair), "")
	}
	if v.HasCommitLogLowerBound {
		f("Commit log lower bound", m.CommitLogLowerBound, "")
	}
	f("Commit log upper bound", m.CommitLogUpperBound, "")
	if v.HasCommitLogIntervals {
		f("Replay positions covered", strings.Join(m.CommitLogIntervals, " "), "")
	}
	f("totalColumnsSet", m.TotalColumnsSet, "")
	f("totalRows", m.TotalRows, "")
	f("Estimated keys", m.EstimatedKeys, "")
	if m.HasPartitionDeletions != nil {
		f("Has partition level deletions", *m.HasPartitionDeletions, "")
	}
	f("Has legacy counter shards", m.HasLegacyCounterShard, "")
	if sm := m.Summary; sm != nil {
		f("Index summary", fmt.Sprintf("%s, min index interval %d, sampling level %d/128, %d at full sampling, keys estimated %d",
			plural(sm.Entries, "entry"), sm.MinIndexInterval, sm.SamplingLevel, sm.SizeAtFullSampling, sm.EstimatedKeys), "")
		f("Index summary first/last key", sm.FirstKey+" .. "+sm.LastKey, "")
	}
	if pi := m.PartitionIndex; pi != nil {
		f("Partitions.db", fmt.Sprintf("%d bytes, %s", pi.SizeOnDisk, plural(pi.KeyCount, "key")), "first "+pi.FirstKey+", last "+pi.LastKey)
		pr.trie("Partitions.db trie", pi.Trie, "key")
	}
	if ri := m.RowIndex; ri != nil {
		per := ""
		if ri.Entries > 0 {
			per = fmt.Sprintf("%d to %d per entry", ri.MinBlocks, ri.MaxBlocks)
		}
		f("Rows.db", fmt.Sprintf("%d bytes, %s (partitions with a row index), %s", ri.SizeOnDisk, plural(ri.Entries, "entry"), plural(ri.Blocks, "block")), per)
		if ri.Entries > 0 {
			pr.trie("Rows.db tries", ri.Trie, "block")
		}
	}
	if fl := m.Filter; fl != nil {
		f("Bloom filter", fmt.Sprintf("%s, %d bits, %d bytes on disk", plural(fl.HashCount, "hash function"), fl.Bits, fl.SizeOnDisk), "")
	}
	pr.section("Estimated tombstone drop times")
	var drops []termBin
	for _, b := range m.TombstoneDropTimes {
		drops = append(drops, termBin{b.Time, b.Count})
	}
	termHistogram{title: "Drop Time", bins: drops, offsetName: func(t int64) string {
		return fmt.Sprintf("%d %s", t, pr.style.quiet(dateIn(t, time.Second)))
	}}.print(pr.w, pr.style)
	pr.section("Partition Size")
	pr.histogram(m.PartitionSize, "Size (bytes)", pr.bytesName)
	pr.section("Column Count")
	pr.histogram(m.CellCount, "Columns", countName)
	if v.HasTokenSpaceCoverage {
		cov := "NaN"
		if m.TokenSpaceCoverage != nil {
			cov = javaDouble(*m.TokenSpaceCoverage)
		}
		f("Local token space coverage", cov, "")
	}
	f("Estimated cardinality", m.EstimatedCardinality, "")
	h := m.Header
	raw := func(r *uint64) string {
		if r == nil {
			return ""
		}
		return fmt.Sprintf("stored delta %d does not fit an int: cast as Cassandra 3.x/4.x read it", *r)
	}
	f("EncodingStats minTTL", h.MinTTL, joinComments(durationWords(h.MinTTL), raw(h.RawMinTTL)))
	f("EncodingStats minLocalDeletionTime", h.MinLocalDelTime, joinComments(dateIn(h.MinLocalDelTime, time.Second), raw(h.RawMinLocalDelTime)))
	f("EncodingStats minTimestamp", h.MinTimestamp, dateIn(h.MinTimestamp, pr.unit))
	f("KeyType", h.KeyType, "")
	f("ClusteringTypes", "["+strings.Join(h.ClusteringTypes, ", ")+"]", "")
	f("StaticColumns", columnMap(h.StaticColumns), "")
	f("RegularColumns", columnMap(h.RegularColumns), "")
	for _, n := range h.Notes {
		f("Serialization header note", n, "")
	}
	if m.IsTransient != nil {
		f("IsTransient", *m.IsTransient, "")
	}
	fmt.Fprintln(pr.w)
}

func orDashes(s string) string {
	if s == "" {
		return "--" // sstablemetadata's null
	}
	return s
}

func joinComments(cs ...string) string {
	var out []string
	for _, c := range cs {
		if c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "; ")
}

// columnMap is FBUtilities.toString of the header's name -> type map:
// "name:type, name:type".
func columnMap(cols []inspect.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + ":" + c.Type
	}
	return strings.Join(parts, ", ")
}

func (pr metadataPrinter) bytesName(v int64) string {
	return fmt.Sprintf("%d %s", v, pr.style.quiet(toByteString(v)))
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
		fmt.Fprintf(pr.w, "   (%s above the largest bucket left out, as Cassandra drops them)\n", plural(over, "value"))
	}
}

// trie prints a BTI trie's facts: its nodes by type (in TrieNode.Types
// order), depth and bytes per key.
func (pr metadataPrinter) trie(name string, t inspect.TrieInfo, per string) {
	detail := fmt.Sprintf("%s, depth %d, %.1f bytes per %s", plural(t.Nodes, "node"), t.MaxDepth, t.BytesPerKey, per)
	if t.Pages > 0 {
		detail += fmt.Sprintf(", %s", plural(t.Pages, "page"))
		if t.PageCrossing > 0 {
			detail += fmt.Sprintf(" (%d nodes across a page boundary)", t.PageCrossing)
		}
	}
	pr.field(name, detail, "")
	var types []string
	for i := 0; i < 16; i++ {
		n := trie.NodeType(i).String()
		if c := t.NodeTypes[n]; c > 0 {
			types = append(types, fmt.Sprintf("%s %d", n, c))
		}
	}
	pr.field(name+" node types", strings.Join(types, ", "), "")
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
		fmt.Fprintln(pr.w, "  "+entry(kv)+st.wrap(ansiWhite, " ("+toByteString(kv.Value)+")"))
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
