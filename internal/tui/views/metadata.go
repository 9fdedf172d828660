package views

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sstabletool/sstabletool/format/bti/trie"
	"github.com/sstabletool/sstabletool/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
)

// Metadata shows everything `sstabletool metadata` knows about a table
// (inspect.ReadMetadata), grouped into sections, plus the CREATE TABLE the
// serialization header implies.
type Metadata struct {
	env  *Env
	t    *catalog.Table
	vp   viewport.Model
	m    *inspect.Metadata
	err  error
	w, h int
}

// NewMetadata reads the table's metadata.
func NewMetadata(env *Env, t *catalog.Table) *Metadata {
	v := &Metadata{env: env, t: t, vp: viewport.New(0, 0)}
	v.vp.MouseWheelEnabled = true
	v.m, v.err = t.Metadata()
	return v
}

func (v *Metadata) Init() tea.Cmd {
	if v.err != nil {
		return status(v.err.Error(), true)
	}
	return nil
}

func (v *Metadata) Title() string         { return "metadata" }
func (v *Metadata) Table() *catalog.Table { return v.t }
func (v *Metadata) Capturing() bool       { return false }
func (v *Metadata) Close()                {}
func (v *Metadata) Keys() []key.Binding {
	k := v.env.Keys
	return []key.Binding{k.Down, k.PageDown, k.Home}
}

func (v *Metadata) SetSize(w, h int) {
	v.w, v.h = w, h
	v.vp.Width, v.vp.Height = w, h
	v.vp.SetContent(clip(v.content(), w))
}

func (v *Metadata) Update(msg tea.Msg) tea.Cmd {
	if mv := navigation(msg, v.env.Keys); mv.ok {
		scrollViewport(&v.vp, mv)
	}
	return nil
}

func (v *Metadata) View() string { return frame(strings.Split(v.vp.View(), "\n"), v.w, v.h) }

func (v *Metadata) content() string {
	th := v.env.Theme
	if v.err != nil {
		return " " + th.Error.Render(v.err.Error())
	}
	m := v.m
	var b strings.Builder
	section := func(name string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(" " + th.Section.Render(name) + "\n")
	}
	kw := 30
	if v.w < 90 {
		kw = 22
	}
	p := func(k string, val any) {
		b.WriteString("   " + th.Label.Render(Fit(k, kw)) + " " + fmt.Sprint(val) + "\n")
	}
	section("Identity")
	p("Data.db", m.Path)
	p("version", fmt.Sprintf("%s (%s format, %s DeletionTime)", m.Version, m.Format, v.t.S.Version().DeletionTimeLayout()))
	p("generation", m.Generation)
	p("components", strings.Join(m.Components, ", "))
	p("partitioner", m.Partitioner)
	p("bloom filter fp chance", m.BloomFilterFPChance)

	section("Size and compression")
	p("Data.db on disk", cellfmt.Bytes(m.DataSize))
	p("Data.db uncompressed", cellfmt.Bytes(m.UncompressedDataSize))
	if c := m.Compression; c != nil {
		p("compressor", c.Compressor)
		p("chunk length", cellfmt.Bytes(int64(c.ChunkLength)))
		p("chunks", c.Chunks)
		p("compression ratio", fmt.Sprintf("%.3f", c.Ratio))
		for k, o := range c.Options {
			p("option "+k, o)
		}
	} else {
		p("compression", "none (CRC.db checksums)")
	}
	p("estimated keys", cellfmt.Count(m.EstimatedKeys))
	p("estimated cardinality", cellfmt.Count(m.EstimatedCardinality))
	p("total rows", cellfmt.Count(m.TotalRows))
	p("total columns set", cellfmt.Count(m.TotalColumnsSet))
	hist := func(name string, h inspect.Histogram) {
		p(name, fmt.Sprintf("count %d · min %d · max %d · mean %d", h.Count, h.Min, h.Max, h.Mean))
		p("", fmt.Sprintf("p50 %d · p75 %d · p95 %d · p99 %d", h.P50, h.P75, h.P95, h.P99))
		for _, bk := range h.Buckets {
			off := "overflow"
			if bk.Offset != math.MaxInt64 {
				off = "≤ " + cellfmt.Count(bk.Offset)
			}
			p("", fmt.Sprintf("%16s  %s", off, cellfmt.Count(bk.Count)))
		}
	}
	hist("partition size (bytes)", m.PartitionSize)
	hist("cells per partition", m.CellCount)

	section("Time")
	p("min timestamp", timestamp(m.MinTimestamp))
	p("max timestamp", timestamp(m.MaxTimestamp))
	p("min local deletion time", cellfmt.Seconds(m.MinLocalDeletionTime))
	p("max local deletion time", cellfmt.Seconds(m.MaxLocalDeletionTime))
	p("duration", durationOf(m.MaxTimestamp-m.MinTimestamp))
	p("min TTL", m.MinTTL)
	p("max TTL", m.MaxTTL)

	section("Tombstones")
	p("estimated droppable", fmt.Sprintf("%.4f", m.EstimatedDroppable))
	if m.HasPartitionDeletions != nil {
		p("partition-level deletions", *m.HasPartitionDeletions)
	}
	if len(m.TombstoneDropTimes) == 0 {
		p("drop times", "none")
	}
	for _, bin := range m.TombstoneDropTimes {
		p("drop time "+cellfmt.Seconds(bin.Time), cellfmt.Count(bin.Count))
	}

	section("Keys and clustering")
	if k := m.KeyRange; k != nil {
		p("first token", k.FirstToken+" (key "+k.First+")")
		p("last token", k.LastToken+" (key "+k.Last+")")
	}
	if m.LegacyMinClustering != nil {
		p("min clustering (legacy)", m.LegacyMinClustering)
		p("max clustering (legacy)", m.LegacyMaxClustering)
	}
	if m.CoveredClustering != nil {
		p("covered clusterings", m.CoveredClustering.Start+" .. "+m.CoveredClustering.End)
	}
	if m.TokenSpaceCoverage != nil {
		p("token space coverage", *m.TokenSpaceCoverage)
	}

	section("Repair and commit log")
	p("sstable level", m.SSTableLevel)
	p("repaired at", m.RepairedAt)
	// Fields the sstable's version does not store are left out, as
	// `sstabletool metadata` does.
	flags := m.Flags()
	if flags.HasPendingRepair {
		p("pending repair", dashes(m.PendingRepair))
	}
	if m.IsTransient != nil {
		p("transient", *m.IsTransient)
	}
	if flags.HasOriginatingHostID {
		p("originating host", dashes(m.OriginatingHostID))
	}
	if flags.HasCommitLogLowerBound {
		p("commit log lower bound", m.CommitLogLowerBound)
	}
	p("commit log upper bound", m.CommitLogUpperBound)
	if flags.HasCommitLogIntervals {
		p("replay positions covered", strings.Join(m.CommitLogIntervals, " "))
	}
	p("legacy counter shards", m.HasLegacyCounterShard)

	if m.Summary != nil || m.PartitionIndex != nil || m.Filter != nil {
		section("Indexes and filter")
	}
	if sm := m.Summary; sm != nil {
		p("index summary", fmt.Sprintf("%s entries, min index interval %d, sampling level %d/128", cellfmt.Count(int64(sm.Entries)), sm.MinIndexInterval, sm.SamplingLevel))
	}
	if pi := m.PartitionIndex; pi != nil {
		p("Partitions.db", fmt.Sprintf("%s, %s keys, first %s, last %s", cellfmt.Bytes(pi.SizeOnDisk), cellfmt.Count(pi.KeyCount), pi.FirstKey, pi.LastKey))
		p("", trieLine(pi.Trie, "key"))
	}
	if ri := m.RowIndex; ri != nil {
		p("Rows.db", fmt.Sprintf("%s, %s entries (partitions with a row index), %s blocks (%d to %d per entry)",
			cellfmt.Bytes(ri.SizeOnDisk), cellfmt.Count(ri.Entries), cellfmt.Count(ri.Blocks), ri.MinBlocks, ri.MaxBlocks))
		if ri.Entries > 0 {
			p("", trieLine(ri.Trie, "block"))
		}
	}
	if f := m.Filter; f != nil {
		p("bloom filter", fmt.Sprintf("%d hash functions, %s bits, %s on disk", f.HashCount, cellfmt.Count(f.Bits), cellfmt.Bytes(f.SizeOnDisk)))
	}

	section("Serialization header")
	p("key type", m.Header.KeyType)
	p("clustering types", strings.Join(m.Header.ClusteringTypes, ", "))
	for _, c := range m.Header.StaticColumns {
		p("static "+c.Name, c.CQL)
	}
	for _, c := range m.Header.RegularColumns {
		p("regular "+c.Name, c.CQL)
	}
	p("EncodingStats minima", fmt.Sprintf("timestamp %d · local deletion time %d · TTL %d", m.Header.MinTimestamp, m.Header.MinLocalDelTime, m.Header.MinTTL))

	section("Schema (names are placeholders: sstables do not store key column names)")
	for _, line := range strings.Split(strings.TrimRight(v.t.CreateTable(), "\n"), "\n") {
		b.WriteString("   " + line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// dashes is sstablemetadata's "--" for a field stored empty.
func dashes(s string) string {
	if s == "" {
		return "--"
	}
	return s
}

// durationOf spells a span in microseconds as sstablemetadata's Duration
// line does (days, hours, minutes, seconds).
func durationOf(us int64) string {
	s := us / 1_000_000
	return fmt.Sprintf("Days: %d Hours: %d Minutes: %d Seconds: %d", s/86400, s/3600-s/86400*24, s/60-s/3600*60, s-s/60*60)
}

// trieLine sums up a BTI trie: its nodes, depth and bytes per key (or
// block), and the node types in use.
func trieLine(t inspect.TrieInfo, per string) string {
	var types []string
	for i := 0; i < 16; i++ {
		n := trie.NodeType(i).String()
		if c := t.NodeTypes[n]; c > 0 {
			types = append(types, fmt.Sprintf("%s %d", n, c))
		}
	}
	return fmt.Sprintf("trie: %s nodes, depth %d, %.1f bytes per %s · %s", cellfmt.Count(t.Nodes), t.MaxDepth, t.BytesPerKey, per, strings.Join(types, ", "))
}

func timestamp(us int64) string {
	if us == math.MinInt64 || us == math.MaxInt64 {
		return fmt.Sprint(us)
	}
	return fmt.Sprintf("%d (%s)", us, cellfmt.Micros(us))
}
