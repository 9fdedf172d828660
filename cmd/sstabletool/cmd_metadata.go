package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/inspect"
)

func init() {
	register(&cli.Command{
		Name:      "metadata",
		Usage:     "print what sstablemetadata shows: Statistics.db, TOC, compression, summary and filter facts",
		ArgsUsage: "PATH...",
		Description: "PATH is any component of an sstable, or a data directory (all sstables in it; -r to recurse).\n" +
			"--json prints one object per sstable with snake_case fields (version, partitioner, min_timestamp,\n" +
			"max_timestamp, key_range, compression, header, ...).\n\n" +
			"Examples:\n" +
			"  sstabletool metadata nc-1-big-Data.db\n" +
			"  sstabletool metadata /var/lib/cassandra/data/shop -r --json | jq '.[].version'   # every sstable of a keyspace",
		Flags:  []cli.Flag{accessFlag, jsonFlag, recursiveFlag, snapshotsFlag, backupsFlag, schemaFlag, tableFlag},
		Action: metadataAction,
	}, sstableArgs)
}

func metadataAction(c *cli.Context) error {
	sf, err := loadSchema(c)
	if err != nil {
		return err
	}
	sc, err := findSSTables(c)
	if err != nil {
		return err
	}
	var all []any // *inspect.Metadata or sstableError, in order
	err = sc.each(func(p string) error {
		s, err := openFound(c, p, sf)
		if err != nil {
			return err
		}
		m, err := inspect.ReadMetadata(s)
		s.Close()
		if err != nil {
			return err
		}
		if c.Bool("json") {
			all = append(all, m)
		} else {
			printMetadata(stdout, m)
		}
		return nil
	}, func(e sstableError) { all = append(all, e) })
	if err != nil {
		return err
	}
	if c.Bool("json") {
		var v any = all
		if sc.total() == 1 {
			v = all[0]
		}
		if err := writeJSON(v); err != nil {
			return err
		}
	}
	return sc.err()
}

func micros(v int64) string {
	if v == -9223372036854775808 || v == 9223372036854775807 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d (%s)", v, time.UnixMicro(v).UTC().Format(time.RFC3339Nano))
}

func seconds(v int64) string {
	if v >= 2147483647 || v < 0 {
		return fmt.Sprintf("%d (no deletion)", v)
	}
	return fmt.Sprintf("%d (%s)", v, time.Unix(v, 0).UTC().Format(time.RFC3339))
}

func printMetadata(w io.Writer, m *inspect.Metadata) {
	p := func(k string, v any) { fmt.Fprintf(w, "%-34s %v\n", k+":", v) }
	p("SSTable", m.Path)
	p("Version", fmt.Sprintf("%s (%s format)", m.Version, m.Format))
	p("Generation", m.Generation)
	p("Components", strings.Join(m.Components, ", "))
	p("Partitioner", m.Partitioner)
	p("Bloom Filter FP chance", m.BloomFilterFPChance)
	p("Minimum timestamp", micros(m.MinTimestamp))
	p("Maximum timestamp", micros(m.MaxTimestamp))
	p("SSTable min local deletion time", seconds(m.MinLocalDeletionTime))
	p("SSTable max local deletion time", seconds(m.MaxLocalDeletionTime))
	p("TTL min", m.MinTTL)
	p("TTL max", m.MaxTTL)
	if m.Compression != nil {
		p("Compressor", m.Compression.Compressor)
		p("Chunk length", m.Compression.ChunkLength)
		p("Compression ratio", m.Compression.Ratio)
	} else {
		p("Compression", "none (CRC.db checksums)")
	}
	p("Data.db on disk / uncompressed", fmt.Sprintf("%d / %d bytes", m.DataSize, m.UncompressedDataSize))
	p("Estimated droppable tombstones", m.EstimatedDroppable)
	p("SSTable Level", m.SSTableLevel)
	p("Repaired at", m.RepairedAt)
	if m.PendingRepair != "" {
		p("Pending repair", m.PendingRepair)
	}
	p("isTransient", m.IsTransient)
	if m.OriginatingHostID != "" {
		p("Originating host id", m.OriginatingHostID)
	}
	p("Commit log lower bound", m.CommitLogLowerBound)
	p("Commit log upper bound", m.CommitLogUpperBound)
	p("Commit log intervals", strings.Join(m.CommitLogIntervals, " "))
	p("totalColumnsSet", m.TotalColumnsSet)
	p("totalRows", m.TotalRows)
	p("Estimated keys", m.EstimatedKeys)
	p("Estimated cardinality", m.EstimatedCardinality)
	if m.LegacyMinClustering != nil {
		p("minClusteringValues (legacy)", m.LegacyMinClustering)
		p("maxClusteringValues (legacy)", m.LegacyMaxClustering)
	}
	if m.CoveredClustering != nil {
		p("Covered clusterings", m.CoveredClustering.Start+" .. "+m.CoveredClustering.End)
	}
	if m.HasPartitionDeletions != nil {
		p("Has partition level deletions", *m.HasPartitionDeletions)
	}
	if m.KeyRange != nil {
		p("First key", m.KeyRange.First)
		p("Last key", m.KeyRange.Last)
	}
	if m.TokenSpaceCoverage != nil {
		p("Token space coverage", *m.TokenSpaceCoverage)
	}
	p("Has legacy counter shards", m.HasLegacyCounterShard)
	if sm := m.Summary; sm != nil {
		p("Index summary", fmt.Sprintf("%d entries, min index interval %d, sampling level %d/128, %d at full sampling, keys estimated %d",
			sm.Entries, sm.MinIndexInterval, sm.SamplingLevel, sm.SizeAtFullSampling, sm.EstimatedKeys))
		p("Index summary first/last key", sm.FirstKey+" .. "+sm.LastKey)
	}
	if f := m.Filter; f != nil {
		p("Bloom filter", fmt.Sprintf("%d hash functions, %d bits, %d bytes on disk", f.HashCount, f.Bits, f.SizeOnDisk))
	}
	hist := func(name string, h inspect.Histogram) {
		fmt.Fprintf(w, "%s (count %d, min %d, p50 %d, p75 %d, p95 %d, p99 %d, max %d, mean %d)\n",
			name, h.Count, h.Min, h.P50, h.P75, h.P95, h.P99, h.Max, h.Mean)
		for _, b := range h.Buckets {
			fmt.Fprintf(w, "   %20d %12d\n", b.Offset, b.Count)
		}
	}
	hist("Estimated partition size (bytes)", m.PartitionSize)
	hist("Estimated cell count per partition", m.CellCount)
	fmt.Fprintln(w, "Estimated tombstone drop times:")
	for _, b := range m.TombstoneDropTimes {
		fmt.Fprintf(w, "   %-30s %10d\n", seconds(b.Time), b.Count)
	}
	raw := func(v int64, r *uint64) string {
		if r == nil {
			return fmt.Sprint(v)
		}
		return fmt.Sprintf("%d (stored delta %d does not fit an int: cast as Cassandra 3.x/4.x read it)", v, *r)
	}
	p("EncodingStats minTTL", raw(m.Header.MinTTL, m.Header.RawMinTTL))
	p("EncodingStats minLocalDeletionTime", raw(m.Header.MinLocalDelTime, m.Header.RawMinLocalDelTime))
	p("EncodingStats minTimestamp", m.Header.MinTimestamp)
	fmt.Fprintln(w, "Serialization header:")
	fmt.Fprintf(w, "   key type:         %s\n", m.Header.KeyType)
	fmt.Fprintf(w, "   clustering types: %s\n", strings.Join(m.Header.ClusteringTypes, ", "))
	for _, col := range m.Header.StaticColumns {
		fmt.Fprintf(w, "   static  %-20s %s\n", col.Name, col.CQL)
	}
	for _, col := range m.Header.RegularColumns {
		fmt.Fprintf(w, "   regular %-20s %s\n", col.Name, col.CQL)
	}
	for _, n := range m.Header.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	fmt.Fprintln(w)
}
