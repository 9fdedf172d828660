package inspect

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/words"
)

// FieldKind says what a Field of a description is.
type FieldKind int

const (
	FieldValue      FieldKind = iota // a named value
	FieldHistograms                  // where sstablemetadata prints Statistics.db's histograms
)

// A Field is one line of an sstable's description: sstablemetadata's
// field name and wording, the value and a comment (a date, a duration in
// words...), and the section a grouped view files it under.
type Field struct {
	Kind    FieldKind
	Section string
	Name    string
	Value   string
	Comment string
}

// Describe lists what sstablemetadata prints of the sstable, in its order
// and wording, with the fields of this tool (components, chunks, index
// summary or BTI tries, bloom filter) and without those the version does
// not store. unit is the unit of cell timestamps (sstablemetadata -t).
// The metadata command and the browser's metadata view both render it.
func (m *Metadata) Describe(unit time.Duration) []Field {
	var out []Field
	v := m.Flags()
	section := "Identity"
	f := func(name string, value any, comment string) {
		out = append(out, Field{Kind: FieldValue, Section: section, Name: name, Value: fmt.Sprint(value), Comment: comment})
	}
	f("SSTable", m.Path, "")
	f("Version", fmt.Sprintf("%s (%s format)", m.Version, m.Format), v.DeletionTimeLayout().String()+" DeletionTime")
	f("Generation", m.Generation, "")
	var notes []string
	missing := slices.DeleteFunc(slices.Clone(m.MissingComponents), func(c string) bool { return c == "TOC.txt" })
	switch {
	case len(missing) < len(m.MissingComponents):
		notes = append(notes, "no TOC.txt: the components found on disk")
	case len(m.UnlistedComponents) > 0:
		notes = append(notes, "on disk, not in TOC.txt: "+strings.Join(m.UnlistedComponents, ", "))
	}
	if len(missing) > 0 {
		notes = append(notes, "in TOC.txt, not on disk: "+strings.Join(missing, ", "))
	}
	if len(m.InvalidTOCEntries) > 0 {
		notes = append(notes, "quoted: TOC.txt lines that are no component file name, ignored")
	}
	f("Components", strings.Join(append(slices.Clone(m.Components), m.InvalidTOCEntries...), ", "), strings.Join(notes, "; "))
	f("Partitioner", m.Partitioner, "")
	f("Bloom Filter FP chance", JavaDouble(m.BloomFilterFPChance), "")
	section = "Time"
	f("Minimum timestamp", m.MinTimestamp, DateIn(m.MinTimestamp, unit))
	f("Maximum timestamp", m.MaxTimestamp, DateIn(m.MaxTimestamp, unit))
	f("Duration", DurationString(m.MaxTimestamp-m.MinTimestamp), "")
	f("SSTable min local deletion time", m.MinLocalDeletionTime, deletionComment(m.MinLocalDeletionTime))
	f("SSTable max local deletion time", m.MaxLocalDeletionTime, deletionComment(m.MaxLocalDeletionTime))
	section = "Size and compression"
	if c := m.Compression; c != nil {
		f("Compressor", c.Compressor, "")
		if len(c.Options) > 0 {
			var opts []string
			for _, k := range slices.Sorted(maps.Keys(c.Options)) {
				opts = append(opts, k+"="+c.Options[k])
			}
			comment := ""
			if len(c.NonCassandraOptions) > 0 {
				comment = strings.Join(c.NonCassandraOptions, ", ") + ": not Cassandra's (ScyllaDB writes it; ignored)"
			}
			f("Compression options", strings.Join(opts, ", "), comment)
		}
		f("Compression ratio", JavaDouble(c.Ratio), "")
		f("Chunk length", c.ChunkLength, fmt.Sprintf("%s of %d bytes", words.Plural(c.Chunks, "chunk"), c.DataLength))
	} else {
		f("Compressor", "-", "uncompressed; CRC.db checksums")
	}
	f("Data.db on disk / uncompressed", fmt.Sprintf("%d / %d bytes", m.DataSize, m.UncompressedDataSize), "")
	section = "Time"
	f("TTL min", m.MinTTL, DurationWords(m.MinTTL))
	f("TTL max", m.MaxTTL, DurationWords(m.MaxTTL))
	section = "Keys and clustering"
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
	section = "Tombstones"
	f("Estimated droppable tombstones", JavaDouble(m.EstimatedDroppable), "")
	section = "Repair and commit log"
	f("SSTable Level", m.SSTableLevel, "")
	f("Repaired at", m.RepairedAt, DateIn(m.RepairedAt, time.Millisecond))
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
	section = "Size and compression"
	f("totalColumnsSet", m.TotalColumnsSet, "")
	f("totalRows", m.TotalRows, "")
	f("Estimated keys", m.EstimatedKeys, "")
	section = "Tombstones"
	if m.HasPartitionDeletions != nil {
		f("Has partition level deletions", *m.HasPartitionDeletions, "")
	}
	section = "Repair and commit log"
	f("Has legacy counter shards", m.HasLegacyCounterShard, "")
	section = "Indexes and filter"
	if sm := m.Summary; sm != nil {
		f("Index summary", fmt.Sprintf("%s, min index interval %d, sampling level %d/128, %d at full sampling, keys estimated %d",
			words.Plural(sm.Entries, "entry"), sm.MinIndexInterval, sm.SamplingLevel, sm.SizeAtFullSampling, sm.EstimatedKeys), "")
		f("Index summary first/last key", sm.FirstKey+" .. "+sm.LastKey, "")
	}
	if pi := m.PartitionIndex; pi != nil {
		f("Partitions.db", fmt.Sprintf("%d bytes, %s", pi.SizeOnDisk, words.Plural(pi.KeyCount, "key")), "first "+pi.FirstKey+", last "+pi.LastKey)
		trieFields(f, "Partitions.db trie", pi.Trie, "key")
	}
	if ri := m.RowIndex; ri != nil {
		per := ""
		if ri.Entries > 0 {
			per = fmt.Sprintf("%d to %d per entry", ri.MinBlocks, ri.MaxBlocks)
		}
		f("Rows.db", fmt.Sprintf("%d bytes, %s (partitions with a row index), %s", ri.SizeOnDisk, words.Plural(ri.Entries, "entry"), words.Plural(ri.Blocks, "block")), per)
		if ri.Entries > 0 {
			trieFields(f, "Rows.db tries", ri.Trie, "block")
		}
	}
	if fl := m.Filter; fl != nil {
		f("Bloom filter", fmt.Sprintf("%s, %d bits, %d bytes on disk", words.Plural(fl.HashCount, "hash function"), fl.Bits, fl.SizeOnDisk), "")
	}
	for _, ix := range m.Indexes {
		var comps []string
		for _, c := range ix.Components {
			size := fmt.Sprintf("%d", c.Bytes)
			if c.Bytes < 0 {
				size = "missing"
			}
			comps = append(comps, c.Component+" "+size)
		}
		f("Index", fmt.Sprintf("%s: %s, %d bytes", ix.Label(), words.Plural(len(ix.Components), "file"), ix.Bytes), strings.Join(comps, ", "))
	}
	out = append(out, Field{Kind: FieldHistograms, Section: "Histograms"})
	section = "Keys and clustering"
	if v.HasTokenSpaceCoverage {
		cov := "NaN"
		if m.TokenSpaceCoverage != nil {
			cov = JavaDouble(*m.TokenSpaceCoverage)
		}
		f("Local token space coverage", cov, "")
	}
	section = "Size and compression"
	f("Estimated cardinality", m.EstimatedCardinality, "")
	section = "Serialization header"
	h := m.Header
	raw := func(r *uint64) string {
		if r == nil {
			return ""
		}
		return fmt.Sprintf("stored delta %d does not fit an int: cast as Cassandra 3.x/4.x read it", *r)
	}
	f("EncodingStats minTTL", h.MinTTL, joinComments(DurationWords(h.MinTTL), raw(h.RawMinTTL)))
	f("EncodingStats minLocalDeletionTime", h.MinLocalDelTime, joinComments(DateIn(h.MinLocalDelTime, time.Second), raw(h.RawMinLocalDelTime)))
	f("EncodingStats minTimestamp", h.MinTimestamp, DateIn(h.MinTimestamp, unit))
	f("KeyType", h.KeyType, strings.Join(h.KeyColumns, ", "))
	f("ClusteringTypes", "["+strings.Join(h.ClusteringTypes, ", ")+"]", strings.Join(h.ClusteringColumns, ", "))
	f("StaticColumns", columnMap(h.StaticColumns), "")
	f("RegularColumns", columnMap(h.RegularColumns), "")
	for _, n := range h.Notes {
		f("Serialization header note", n, "")
	}
	section = "Repair and commit log"
	if m.IsTransient != nil {
		f("IsTransient", *m.IsTransient, "")
	}
	return out
}

// deletionComment is SSTableMetadataViewer.deletion: the date of a local
// deletion time, or "no tombstones" for none.
func deletionComment(v int64) string {
	if v == 0 || v == math.MaxInt64 || v == math.MaxInt32 {
		return "no tombstones"
	}
	return DateIn(v, time.Second)
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
func columnMap(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + ":" + c.Type
	}
	return strings.Join(parts, ", ")
}

// trieFields adds a BTI trie's facts: its nodes by type (in TrieNode.Types
// order), depth and bytes per key.
func trieFields(f func(string, any, string), name string, t TrieInfo, per string) {
	detail := fmt.Sprintf("%s, depth %d, %.1f bytes per %s", words.Plural(t.Nodes, "node"), t.MaxDepth, t.BytesPerKey, per)
	if t.Pages > 0 {
		detail += fmt.Sprintf(", %s", words.Plural(t.Pages, "page"))
		if t.PageCrossing > 0 {
			detail += fmt.Sprintf(" (%d nodes across a page boundary)", t.PageCrossing)
		}
	}
	f(name, detail, "")
	var types []string
	for i := 0; i < 16; i++ {
		n := trie.NodeType(i).String()
		if c := t.NodeTypes[n]; c > 0 {
			types = append(types, fmt.Sprintf("%s %d", n, c))
		}
	}
	f(name+" node types", strings.Join(types, ", "), "")
}
