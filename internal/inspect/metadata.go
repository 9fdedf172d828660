// Package inspect gathers what an operator asks of an sstable — the
// metadata sstablemetadata prints, the CREATE TABLE it implies — from the
// format packages into plain structs that the CLI prints (text or JSON)
// and the TUI shows. It decodes nothing itself.
package inspect

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/filter"
)

// Metadata is one sstable's metadata, with snake_case JSON names.
type Metadata struct {
	Path                 string   `json:"path"`
	Version              string   `json:"version"`
	Format               string   `json:"format"`
	Generation           string   `json:"generation"`
	Components           []string `json:"components"`
	InvalidTOCEntries    []string `json:"invalid_toc_entries,omitempty"` // TOC.txt lines that are no component name, strconv.Quote'd so no control byte prints
	UnlistedComponents   []string `json:"unlisted_components,omitempty"` // on disk, not in TOC.txt (all of them without a TOC.txt); in Components too
	MissingComponents    []string `json:"missing_components,omitempty"`  // in TOC.txt, not on disk (and TOC.txt itself when missing)
	Partitioner          string   `json:"partitioner"`
	BloomFilterFPChance  float64  `json:"bloom_filter_fp_chance"`
	MinTimestamp         int64    `json:"min_timestamp"`
	MaxTimestamp         int64    `json:"max_timestamp"`
	MinLocalDeletionTime int64    `json:"min_local_deletion_time"`
	MaxLocalDeletionTime int64    `json:"max_local_deletion_time"`
	MinTTL               int64    `json:"min_ttl"`
	MaxTTL               int64    `json:"max_ttl"`
	RepairedAt           int64    `json:"repaired_at"`
	PendingRepair        string   `json:"pending_repair,omitempty"` // na+, when pending
	IsTransient          *bool    `json:"is_transient,omitempty"`   // na+
	OriginatingHostID    string   `json:"originating_host_id,omitempty"`
	CommitLogLowerBound  string   `json:"commit_log_lower_bound,omitempty"` // mb+
	CommitLogUpperBound  string   `json:"commit_log_upper_bound"`
	CommitLogIntervals   []string `json:"commit_log_intervals,omitempty"` // mc+
	SSTableLevel         int32    `json:"sstable_level"`
	TotalRows            int64    `json:"total_rows"`
	TotalColumnsSet      int64    `json:"total_columns_set"`
	EstimatedDroppable   float64  `json:"estimated_droppable_tombstones"`
	// GCGraceSeconds is how far before now the droppable estimate is
	// taken (sstablemetadata -g); GCBefore is that time, in seconds.
	GCGraceSeconds        int64               `json:"gc_grace_seconds"`
	GCBefore              int64               `json:"-"`
	PartitionSize         Histogram           `json:"estimated_partition_size"`
	CellCount             Histogram           `json:"estimated_cell_count"`
	TombstoneDropTimes    []TombstoneBin      `json:"tombstone_drop_times"`
	Compression           *Compression        `json:"compression,omitempty"`
	EstimatedKeys         int64               `json:"estimated_keys"`
	EstimatedCardinality  int64               `json:"estimated_cardinality"`
	LegacyMinClustering   []string            `json:"legacy_min_clustering,omitempty"`
	LegacyMaxClustering   []string            `json:"legacy_max_clustering,omitempty"`
	CoveredClustering     *CoveredClustering  `json:"covered_clustering,omitempty"`
	HasPartitionDeletions *bool               `json:"has_partition_level_deletions,omitempty"`
	KeyRange              *KeyRange           `json:"key_range,omitempty"`
	TokenSpaceCoverage    *float64            `json:"token_space_coverage,omitempty"`
	HasLegacyCounterShard bool                `json:"has_legacy_counter_shards"`
	Summary               *SummaryInfo        `json:"summary,omitempty"`         // big format
	PartitionIndex        *PartitionIndexInfo `json:"partition_index,omitempty"` // BTI: Partitions.db
	RowIndex              *RowIndexInfo       `json:"row_index,omitempty"`       // BTI: Rows.db
	Filter                *FilterInfo         `json:"bloom_filter,omitempty"`
	// Indexes are the SAI and SASI indexes whose files lie beside the
	// sstable (IndexesOf).
	Indexes              []Index `json:"indexes,omitempty"`
	Header               Header  `json:"header"`
	DataSize             int64   `json:"data_size_on_disk"`
	UncompressedDataSize int64   `json:"data_size_uncompressed"`
	// Scan is what reading every partition found (metadata -s); nil
	// unless asked for.
	Scan *ScanInfo `json:"scan,omitempty"`
}

// Histogram is an EstimatedHistogram summarized like sstablemetadata.
type Histogram struct {
	Count   int64    `json:"count"`
	Min     int64    `json:"min"`
	Max     int64    `json:"max"`
	Mean    int64    `json:"mean"`
	P50     int64    `json:"p50"`
	P75     int64    `json:"p75"`
	P95     int64    `json:"p95"`
	P98     int64    `json:"p98"`
	P99     int64    `json:"p99"`
	Buckets []Bucket `json:"buckets"`
	// Overflowed is set when values exceeded the largest bucket.
	Overflowed bool `json:"overflowed"`
}

// Bucket is one non-empty histogram bucket: values up to Offset.
type Bucket struct {
	Offset int64 `json:"offset"`
	Count  int64 `json:"count"`
}

// TombstoneBin counts tombstones whose local deletion time is at Time.
type TombstoneBin struct {
	Time  int64 `json:"time"`
	Count int64 `json:"count"`
}

// Compression describes CompressionInfo.db.
type Compression struct {
	// Compressor is the compressor's full class name, as Cassandra resolves
	// the name stored (usually the simple name, LZ4Compressor).
	Compressor     string            `json:"compressor"`
	Options        map[string]string `json:"options,omitempty"`
	ChunkLength    int               `json:"chunk_length"`
	Chunks         int               `json:"chunks"`
	Ratio          float64           `json:"ratio"`
	DataLength     int64             `json:"uncompressed_length"`
	CompressedSize int64             `json:"compressed_length"`
	// NonCassandraOptions are the options Cassandra's writers never store
	// (crc_check_chance, which ScyllaDB writes); reads ignore them.
	NonCassandraOptions []string `json:"non_cassandra_options,omitempty"`
}

// SummaryInfo describes Summary.db.
type SummaryInfo struct {
	MinIndexInterval   int    `json:"min_index_interval"`
	SamplingLevel      int    `json:"sampling_level"`
	Entries            int    `json:"entries"`
	SizeAtFullSampling int    `json:"size_at_full_sampling"`
	EstimatedKeys      int64  `json:"estimated_keys"`
	FirstKey           string `json:"first_key"`
	LastKey            string `json:"last_key"`
}

// FilterInfo describes Filter.db.
type FilterInfo struct {
	HashCount     int   `json:"hash_count"`
	Bits          int64 `json:"bits"`
	SizeOnDisk    int64 `json:"size_on_disk"`
	AlwaysPresent bool  `json:"always_present"`
}

// CoveredClustering is the improved min/max clustering (nc+).
type CoveredClustering struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// KeyRange is the first and last partition key and their tokens: from
// Statistics.db in nc and later, from Summary.db before (as sstablemetadata
// reads them).
type KeyRange struct {
	First      string `json:"first"`
	Last       string `json:"last"`
	FirstToken string `json:"first_token"`
	LastToken  string `json:"last_token"`
	From       string `json:"from"` // the component they come from
}

// Header is the serialization header.
type Header struct {
	KeyType         string   `json:"key_type"`
	ClusteringTypes []string `json:"clustering_types"`
	// KeyColumns and ClusteringColumns are the names the table's schema
	// gives the key's components and the clustering columns (sstables do
	// not store them); absent without a schema.
	KeyColumns        []string `json:"key_columns,omitempty"`
	ClusteringColumns []string `json:"clustering_columns,omitempty"`
	StaticColumns     []Column `json:"static_columns"`
	RegularColumns    []Column `json:"regular_columns"`
	MinTimestamp      int64    `json:"min_timestamp"`
	MinLocalDelTime   int64    `json:"min_local_deletion_time"`
	MinTTL            int64    `json:"min_ttl"`
	// The stored deltas where they are not Java ints, so that Cassandra
	// 3.x/4.x read them cast (the interpreted values are above).
	RawMinLocalDelTime *uint64 `json:"raw_min_local_deletion_time_delta,omitempty"`
	RawMinTTL          *uint64 `json:"raw_min_ttl,omitempty"`
	// Notes say where the header as stored was read differently (a cast
	// minimum, a frozen UDT recorded as non-frozen).
	Notes []string `json:"notes,omitempty"`
}

// Column is a header column.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
	CQL  string `json:"cql_type"`
}

// MetadataOptions are sstablemetadata's settings that change figures.
type MetadataOptions struct {
	// Now is the current time in seconds (0: the clock's).
	Now int64
	// GCGraceSeconds moves the droppable-tombstone estimate back by that
	// many seconds (sstablemetadata -g/--gc_grace_seconds).
	GCGraceSeconds int64
	// Table, when set, is the sstable's table in a schema: it names the
	// columns of the indexes listed.
	Table *cqltype.TableSchema
}

// ReadMetadata collects the metadata of an opened sstable, estimating
// droppable tombstones as of now.
func ReadMetadata(s *sstable.SSTable) (*Metadata, error) {
	return ReadMetadataWith(s, MetadataOptions{})
}

// FullCompressorClass is the class a compressor name stored in
// CompressionInfo.db resolves to (CompressionParams.parseCompressorClass):
// a simple name lives in org.apache.cassandra.io.compress.
func FullCompressorClass(name string) string {
	if strings.Contains(name, ".") {
		return name
	}
	return "org.apache.cassandra.io.compress." + name
}

// ReadMetadataWith is ReadMetadata with sstablemetadata's options.
func ReadMetadataWith(s *sstable.SSTable, o MetadataOptions) (*Metadata, error) {
	if o.Now == 0 {
		o.Now = time.Now().Unix()
	}
	st := s.Stats()
	v := s.Version()
	m := &Metadata{
		Path:       s.Path(format.ComponentData),
		Version:    s.Version().Name,
		Format:     string(s.Desc().Version.Format),
		Generation: s.Desc().Generation,
		Components: s.TOC(),
	}
	for _, e := range s.BadTOCEntries() {
		m.InvalidTOCEntries = append(m.InvalidTOCEntries, e.Quoted())
	}
	// What TOC.txt says, and what it does not say is there.
	m.UnlistedComponents = s.UnlistedComponents()
	if !s.HasComponent(format.ComponentTOC) {
		m.UnlistedComponents = s.FoundComponents()
	}
	m.Components = append(slices.Clone(m.Components), m.UnlistedComponents...)
	m.MissingComponents = s.MissingComponents()
	m.Indexes = IndexesOf(s, o.Table)
	if v := st.Validation; v != nil {
		m.Partitioner = v.Partitioner
		m.BloomFilterFPChance = v.BloomFilterFPChance
	}
	if c := st.Compaction; c != nil {
		if n, err := c.EstimatedCardinality(); err == nil {
			m.EstimatedCardinality = n
		}
	}
	if t := st.Stats; t != nil {
		m.MinTimestamp, m.MaxTimestamp = t.MinTimestamp, t.MaxTimestamp
		m.MinLocalDeletionTime, m.MaxLocalDeletionTime = t.MinLocalDeletionTime, t.MaxLocalDeletionTime
		m.MinTTL, m.MaxTTL = int64(t.MinTTL), int64(t.MaxTTL)
		m.RepairedAt = t.RepairedAt
		if t.PendingRepair != nil && v.HasPendingRepair {
			m.PendingRepair = t.PendingRepair.String()
		}
		if v.HasIsTransient {
			b := t.IsTransient
			m.IsTransient = &b
		}
		if t.OriginatingHostID != nil && v.HasOriginatingHostID {
			m.OriginatingHostID = t.OriginatingHostID.String()
		}
		if v.HasCommitLogLowerBound {
			m.CommitLogLowerBound = t.CommitLogLowerBound.String()
		}
		m.CommitLogUpperBound = t.CommitLogUpperBound.String()
		if v.HasCommitLogIntervals {
			m.CommitLogIntervals = []string{}
			for _, iv := range t.CommitLogIntervals {
				m.CommitLogIntervals = append(m.CommitLogIntervals, fmt.Sprintf("[%s, %s]", iv.Start, iv.End))
			}
		}
		m.SSTableLevel = t.Level
		m.TotalRows, m.TotalColumnsSet = t.TotalRows, t.TotalColumnsSet
		m.PartitionSize = histogram(t.PartitionSizes)
		m.CellCount = histogram(t.CellsPerPartition)
		m.EstimatedKeys = m.PartitionSize.Count
		m.TombstoneDropTimes = []TombstoneBin{}
		for _, b := range t.TombstoneDropTimes.Bins {
			m.TombstoneDropTimes = append(m.TombstoneDropTimes, TombstoneBin{Time: b.DeletionTime, Count: int64(b.Count)})
		}
		m.GCGraceSeconds, m.GCBefore = o.GCGraceSeconds, o.Now-o.GCGraceSeconds
		m.EstimatedDroppable = droppable(t, m.GCBefore)
		m.HasLegacyCounterShard = t.HasLegacyCounterShards
		if v.HasLegacyMinMax {
			m.LegacyMinClustering = formatValues(s.ClusteringTypes(), t.LegacyMinClusteringValues)
			m.LegacyMaxClustering = formatValues(s.ClusteringTypes(), t.LegacyMaxClusteringValues)
		}
		if v.HasImprovedMinMax {
			m.CoveredClustering = &CoveredClustering{
				Start: formatBound(s.ClusteringTypes(), t.CoveredClustering.Start.Kind.String(), t.CoveredClustering.Start.Values),
				End:   formatBound(s.ClusteringTypes(), t.CoveredClustering.End.Kind.String(), t.CoveredClustering.End.Values),
			}
		}
		if v.HasPartitionLevelDeletions {
			b := t.HasPartitionLevelDeletions
			m.HasPartitionDeletions = &b
		}
		if v.HasKeyRange && t.FirstKey != nil && t.LastKey != nil {
			m.KeyRange = keyRange(s, t.FirstKey, t.LastKey, format.ComponentStatistics)
		}
		if v.HasTokenSpaceCoverage && !math.IsNaN(t.TokenSpaceCoverage) {
			c := t.TokenSpaceCoverage
			m.TokenSpaceCoverage = &c
		}
	}
	if h := st.Header; h != nil {
		m.Header = Header{KeyType: h.KeyType.Class, MinTimestamp: h.MinTimestamp, MinLocalDelTime: h.MinLocalDeletionTime, MinTTL: h.MinTTL,
			ClusteringTypes: []string{}, StaticColumns: []Column{}, RegularColumns: []Column{}}
		for _, c := range h.ClusteringTypes {
			m.Header.ClusteringTypes = append(m.Header.ClusteringTypes, c.Class)
		}
		if int64(h.RawMinLocalDeletionTime) != int64(int32(h.RawMinLocalDeletionTime)) && h.HasRaw {
			raw := h.RawMinLocalDeletionTime
			m.Header.RawMinLocalDelTime = &raw
		}
		if int64(h.RawMinTTL) != int64(int32(h.RawMinTTL)) && h.HasRaw {
			raw := h.RawMinTTL
			m.Header.RawMinTTL = &raw
		}
		m.Header.Notes = append(m.Header.Notes, h.CastMinima()...)
		for _, f := range s.HeaderFixes() {
			m.Header.Notes = append(m.Header.Notes, f.String())
		}
		for i, c := range s.Schema().Static {
			m.Header.StaticColumns = append(m.Header.StaticColumns, Column{Name: c.Name, Type: c.Type, CQL: s.StaticTypes()[i].CQL()})
		}
		for i, c := range s.Schema().Regular {
			m.Header.RegularColumns = append(m.Header.RegularColumns, Column{Name: c.Name, Type: c.Type, CQL: s.RegularTypes()[i].CQL()})
		}
	}
	if fi, err := os.Stat(s.Path(format.ComponentData)); err == nil {
		m.DataSize = fi.Size()
	}
	if !v.IsBTI() && s.HasComponent(format.ComponentSummary) {
		sum, err := s.Summary()
		if err != nil {
			return nil, err
		}
		m.Summary = &SummaryInfo{MinIndexInterval: sum.MinIndexInterval, SamplingLevel: sum.SamplingLevel,
			Entries: sum.Len(), SizeAtFullSampling: sum.SizeAtFullSampling, EstimatedKeys: sum.EstimatedKeyCount(),
			FirstKey: FormatKey(s.KeyType(), sum.First), LastKey: FormatKey(s.KeyType(), sum.Last)}
		if m.KeyRange == nil {
			m.KeyRange = keyRange(s, sum.First, sum.Last, format.ComponentSummary)
		}
	}
	if v.IsBTI() {
		if err := readTries(s, m); err != nil {
			return nil, err
		}
	}
	if p := s.Path(format.ComponentFilter); s.HasComponent(format.ComponentFilter) {
		bf, err := filter.ReadFile(p, s.Version().HasOldBloomFilterFormat)
		if err != nil {
			return nil, err
		}
		fi, _ := os.Stat(p)
		m.Filter = &FilterInfo{HashCount: bf.HashCount(), Bits: bf.Capacity(), SizeOnDisk: fi.Size(), AlwaysPresent: bf.IsAlwaysPresent()}
	}
	m.UncompressedDataSize = s.Data().Length()
	if ci := s.Data().Info(); ci != nil {
		m.Compression = &Compression{
			Compressor: FullCompressorClass(ci.Compressor), Options: ci.Options, ChunkLength: ci.ChunkLength, Chunks: ci.ChunkCount(),
			DataLength: ci.DataLength, CompressedSize: m.DataSize, NonCassandraOptions: ci.NonCassandraOptions(),
		}
		if st.Stats != nil {
			m.Compression.Ratio = st.Stats.CompressionRatio
		}
	}
	return m, nil
}

func histogram(h stats.EstimatedHistogram) Histogram {
	out := Histogram{Count: h.Count(), Buckets: []Bucket{}, Overflowed: h.IsOverflowed()}
	clean := h.WithoutOverflow()
	if out.Count > 0 {
		out.Min, out.Max = clean.Min(), clean.Max()
		out.Mean, _ = clean.Mean()
		out.P50, _ = clean.Percentile(0.5)
		out.P75, _ = clean.Percentile(0.75)
		out.P95, _ = clean.Percentile(0.95)
		out.P98, _ = clean.Percentile(0.98)
		out.P99, _ = clean.Percentile(0.99)
	}
	for i, c := range h.Buckets {
		if c == 0 {
			continue
		}
		off := int64(math.MaxInt64)
		if i < len(h.Offsets) {
			off = h.Offsets[i]
		}
		out.Buckets = append(out.Buckets, Bucket{Offset: off, Count: c})
	}
	return out
}

// droppable estimates the share of droppable tombstones at now (seconds),
// as StatsMetadata.getEstimatedDroppableTombstoneRatio does with gcBefore =
// now: the cell estimate is the histogram's count times its mean rounded
// up (EstimatedHistogram.mean), not the exact weighted sum, and the
// overflow bucket is cleared first, as StatsMetadata's deserializer does.
func droppable(t *stats.Stats, now int64) float64 {
	h := t.CellsPerPartition.WithoutOverflow()
	mean, err := h.Mean()
	if err != nil {
		return 0
	}
	cells := mean * h.Count()
	if cells <= 0 {
		return 0
	}
	return t.TombstoneDropTimes.Sum(now) / float64(cells)
}

func keyRange(s *sstable.SSTable, first, last []byte, from string) *KeyRange {
	return &KeyRange{First: FormatKey(s.KeyType(), first), Last: FormatKey(s.KeyType(), last),
		FirstToken: s.Partitioner().Token(first).String(), LastToken: s.Partitioner().Token(last).String(), From: from}
}

// Flags is the feature set of the sstable's version: which fields it
// stores (an ma sstable has no isTransient, pending repair or
// originating host id).
func (m *Metadata) Flags() format.Version {
	v, _ := format.ParseFormatVersion(format.Format(m.Format), m.Version)
	return v
}

func formatValues(types []*cqltype.Type, vals [][]byte) []string {
	out := []string{}
	for i, v := range vals {
		if i < len(types) {
			if s, err := types[i].Format(v); err == nil {
				out = append(out, s)
				continue
			}
		}
		out = append(out, fmt.Sprintf("0x%x", v))
	}
	return out
}

func formatBound(types []*cqltype.Type, kind string, vals [][]byte) string {
	return fmt.Sprintf("%s%v", kind, formatValues(types, vals))
}

// FormatKey renders a partition key with its type, falling back to hex.
func FormatKey(t *cqltype.Type, key []byte) string {
	if t != nil && t.Kind != cqltype.Composite {
		// FormatKeyParts' one part, without its slice and the join
		// (partitions formats every key).
		if s, err := t.Format(key); err == nil {
			return s
		}
	}
	return strings.Join(FormatKeyParts(t, key), ":")
}

// FormatKeyParts is FormatKey's text of each component of a key (one
// for a key of one column); a component (or key) its type cannot read is
// its bytes in hex.
func FormatKeyParts(t *cqltype.Type, key []byte) []string {
	if t != nil {
		if t.Kind == cqltype.Composite {
			comps, _, err := t.Components(key)
			if err == nil {
				out := make([]string, len(comps))
				for i, c := range comps {
					if i < len(t.Params) {
						if v, err := t.Params[i].Format(c.Value); err == nil {
							out[i] = v
							continue
						}
					}
					out[i] = fmt.Sprintf("0x%x", c.Value)
				}
				return out
			}
		} else if s, err := t.Format(key); err == nil {
			return []string{s}
		}
	}
	return []string{fmt.Sprintf("0x%x", key)}
}
