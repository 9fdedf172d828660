package stats

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
)

// NoDeletionTime is the local deletion time of an sstable without
// tombstones or expiring cells (Cell.NO_DELETION_TIME). Legacy versions
// store it as Integer.MAX_VALUE, oa as the unsigned int 0xFFFFFFFF.
const NoDeletionTime = math.MaxInt64

// Deletion-time limits of the two layouts (db/rows/Cell.java).
const (
	// LegacyMaxDeletionTime is the largest time a signed-int layout can
	// hold (Integer.MAX_VALUE - 1, early 2038); larger ones are capped to it.
	LegacyMaxDeletionTime = math.MaxInt32 - 1
	// MaxDeletionTime is the largest regular unsigned time (oa).
	MaxDeletionTime = math.MaxUint32 - 2
	// InvalidDeletionTime is what oa uses for negative (corrupt or
	// overflowed) legacy deletion times.
	InvalidDeletionTime = math.MaxUint32 - 1
)

// NoTokenSpaceCoverage is the coverage writers record outside unified
// compaction: Double.NaN, whose canonical Java bits 0x7ff8000000000000
// differ from Go's math.NaN().
var NoTokenSpaceCoverage = math.Float64frombits(0x7ff8000000000000)

// Stats is StatsMetadata (io/sstable/metadata/StatsMetadata.java). Fields a
// version does not store are left zero by Decode and ignored by Encode;
// the comment says which versions store each.
type Stats struct {
	PartitionSizes    EstimatedHistogram // bytes per partition
	CellsPerPartition EstimatedHistogram

	// CommitLogUpperBound is written first, on its own, in every version.
	CommitLogUpperBound CommitLogPosition

	MinTimestamp, MaxTimestamp int64 // microseconds, by convention

	// Seconds since the epoch, or NoDeletionTime. Signed ints up to nc
	// (capped at LegacyMaxDeletionTime), unsigned ints in oa.
	MinLocalDeletionTime, MaxLocalDeletionTime int64

	MinTTL, MaxTTL     int32   // seconds
	CompressionRatio   float64 // NoCompressionRatio when Data.db is not compressed
	TombstoneDropTimes TombstoneHistogram
	Level              int32 // sstable level (leveled compaction)
	RepairedAt         int64 // milliseconds, 0 when unrepaired

	// Legacy min/max clustering values (ma..nc): the smallest and largest
	// clustering's values, each with a short length. nc writes them from
	// CoveredClustering; before md they are unreliable (CASSANDRA-14861).
	LegacyMinClusteringValues, LegacyMaxClusteringValues [][]byte

	// Improved min/max (nc, oa): the clustering types and the clusterings
	// the sstable covers. For earlier versions Decode derives
	// CoveredClustering from the legacy values as Cassandra's reader does
	// (inclusive bounds from md, all clusterings before) and leaves
	// ClusteringTypes nil; Encode ignores both there.
	ClusteringTypes   []TypeName
	CoveredClustering Slice

	HasLegacyCounterShards bool
	TotalColumnsSet        int64
	TotalRows              int64

	// CommitLogLowerBound is stored from mb (NoCommitLogPosition before),
	// CommitLogIntervals from mc; before mc Decode derives the single
	// interval lower..upper as Cassandra's reader does.
	CommitLogLowerBound CommitLogPosition
	CommitLogIntervals  []CommitLogInterval

	PendingRepair *UUID // na+; nil when not pending
	IsTransient   bool  // na+

	OriginatingHostID *UUID // me..mz and nb+

	HasPartitionLevelDeletions bool // nc+

	FirstKey, LastKey []byte // nc+: the first and last partition keys

	// TokenSpaceCoverage (oa) is NoTokenSpaceCoverage unless unified
	// compaction set it; Decode sets NoTokenSpaceCoverage for other versions.
	TokenSpaceCoverage float64

	// TrailingBytes holds what follows the fields up to the next component
	// when it is not exactly the zero padding Cassandra's writer leaves; nil
	// normally. Encode writes it in place of the padding.
	TrailingBytes []byte
}

// CarryFrom copies into s, the stats of an sstable rewritten from src
// alone (scrub, split, filter), what its rows cannot give and Cassandra's
// writer takes from the one source (CompactionManager.createWriter and
// MetadataCollector over one sstable): the level, the commit log bounds
// and intervals, the repair state (repairedAt, pending repair, transient),
// the originating host and the legacy counter shards flag. The caller
// changes what its rewrite does otherwise (scrub's repairedAt once a
// partition is lost, split's level).
func (s *Stats) CarryFrom(src *Stats) {
	if s == nil || src == nil {
		return
	}
	s.Level = src.Level
	s.CommitLogUpperBound, s.CommitLogLowerBound, s.CommitLogIntervals = src.CommitLogUpperBound, src.CommitLogLowerBound, src.CommitLogIntervals
	s.RepairedAt, s.PendingRepair, s.IsTransient = src.RepairedAt, src.PendingRepair, src.IsTransient
	s.OriginatingHostID = src.OriginatingHostID
	s.HasLegacyCounterShards = src.HasLegacyCounterShards
}

func decodeStats(c *cursor, v format.Version) *Stats {
	s := &Stats{}
	s.PartitionSizes = c.histogram("estimated partition size histogram")
	s.CellsPerPartition = c.histogram("estimated cells per partition histogram")
	s.CommitLogUpperBound = c.commitLogPosition("commit log upper bound")
	s.MinTimestamp = c.i64("min timestamp")
	s.MaxTimestamp = c.i64("max timestamp")
	s.MinLocalDeletionTime = c.localDeletionTime(v, "min local deletion time")
	s.MaxLocalDeletionTime = c.localDeletionTime(v, "max local deletion time")
	s.MinTTL = c.i32("min TTL")
	s.MaxTTL = c.i32("max TTL")
	s.CompressionRatio = c.f64("compression ratio")
	s.TombstoneDropTimes = c.tombstoneHistogram(v.HasUIntDeletionTime)
	s.Level = c.i32("sstable level")
	s.RepairedAt = c.i64("repairedAt")
	if v.HasLegacyMinMax {
		s.LegacyMinClusteringValues = c.legacyValues("legacy min clustering values")
		s.LegacyMaxClusteringValues = c.legacyValues("legacy max clustering values")
		if !v.HasImprovedMinMax {
			// Derived the way StatsMetadata's reader does.
			s.CoveredClustering = legacyCovered(v, s.LegacyMinClusteringValues, s.LegacyMaxClusteringValues)
		}
	} else if v.HasImprovedMinMax {
		c.improvedMinMax(s)
	}
	s.HasLegacyCounterShards = c.boolean("has legacy counter shards")
	s.TotalColumnsSet = c.i64("total columns set")
	s.TotalRows = c.i64("total rows")
	s.CommitLogLowerBound = NoCommitLogPosition
	if v.HasCommitLogLowerBound {
		s.CommitLogLowerBound = c.commitLogPosition("commit log lower bound")
	}
	if v.HasCommitLogIntervals {
		at := c.pos
		n := c.count(at, int64(c.i32("commit log interval count")), 24, "commit log interval")
		if n > 0 {
			s.CommitLogIntervals = make([]CommitLogInterval, 0, initialCap(n))
			for i := 0; i < n && c.err == nil; i++ {
				start := c.commitLogPosition("commit log interval start")
				s.CommitLogIntervals = append(s.CommitLogIntervals, CommitLogInterval{Start: start, End: c.commitLogPosition("commit log interval end")})
			}
		}
	}
	if !v.HasCommitLogIntervals {
		// Derived the way StatsMetadata's reader does.
		s.CommitLogIntervals = []CommitLogInterval{{Start: s.CommitLogLowerBound, End: s.CommitLogUpperBound}}
	}
	if v.HasPendingRepair {
		s.PendingRepair = c.optionalUUID("pending repair")
	}
	if v.HasIsTransient {
		s.IsTransient = c.boolean("isTransient")
	}
	if v.HasOriginatingHostID {
		s.OriginatingHostID = c.optionalUUID("originating host id")
	}
	if v.HasPartitionLevelDeletions {
		s.HasPartitionLevelDeletions = c.boolean("partition-level deletions presence marker")
	}
	if v.HasImprovedMinMax && v.HasLegacyMinMax {
		c.improvedMinMax(s)
	}
	if v.HasKeyRange {
		s.FirstKey = c.vintBytes("first key")
		s.LastKey = c.vintBytes("last key")
	}
	if v.HasTokenSpaceCoverage {
		s.TokenSpaceCoverage = c.f64("token space coverage")
	} else {
		s.TokenSpaceCoverage = NoTokenSpaceCoverage
	}
	return s
}

func (c *cursor) commitLogPosition(what string) CommitLogPosition {
	defer c.enter(what)()
	return CommitLogPosition{SegmentID: c.i64("segment id"), Position: c.i32("position")}
}

// localDeletionTime reads a signed (legacy) or unsigned (oa) int.
func (c *cursor) localDeletionTime(v format.Version, what string) int64 {
	raw := uint32(c.i32(what))
	if v.HasUIntDeletionTime {
		if raw == math.MaxUint32 {
			return NoDeletionTime
		}
		return int64(raw)
	}
	if int32(raw) == math.MaxInt32 {
		return NoDeletionTime
	}
	return int64(int32(raw))
}

func appendLocalDeletionTime(dst []byte, v format.Version, t int64, what string) ([]byte, error) {
	if v.HasUIntDeletionTime {
		switch {
		case t == NoDeletionTime:
			return binary.BigEndian.AppendUint32(dst, math.MaxUint32), nil
		case t < 0 || t >= math.MaxUint32:
			return dst, fmt.Errorf("stats: %s %d does not fit %s's unsigned int", what, t, v.Name)
		}
		return binary.BigEndian.AppendUint32(dst, uint32(t)), nil
	}
	switch {
	case t == NoDeletionTime:
		return binary.BigEndian.AppendUint32(dst, math.MaxInt32), nil
	case t < math.MinInt32:
		return dst, fmt.Errorf("stats: %s %d does not fit %s's signed int", what, t, v.Name)
	}
	// The legacy writer caps times past 2038, as we do.
	return binary.BigEndian.AppendUint32(dst, uint32(int32(min(t, LegacyMaxDeletionTime)))), nil
}

// legacyValues reads an int count and that many short-length values.
func (c *cursor) legacyValues(what string) [][]byte {
	at := c.pos
	n := c.count(at, int64(c.i32(what+" count")), 2, what)
	if c.err != nil || n == 0 {
		return nil
	}
	defer c.enter(what)()
	out := make([][]byte, 0, initialCap(n))
	for i := 0; i < n && c.err == nil; i++ {
		l := c.i16("length")
		out = append(out, c.bytes(int(l), "value"))
	}
	return out
}

func appendLegacyValues(dst []byte, vals [][]byte, what string) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(vals)))
	for _, v := range vals {
		if len(v) > math.MaxUint16 {
			return dst, fmt.Errorf("stats: %s value of %d bytes exceeds a short length", what, len(v))
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(v)))
		dst = append(dst, v...)
	}
	return dst, nil
}

// legacyValuesSize is what the Java size estimate counts for a bound's
// values: a short length and the data of every value, nulls included
// (the writer stops at the first null).
func legacyValuesSize(vals [][]byte) int {
	n := 4
	for _, v := range vals {
		n += 2 + len(v)
	}
	return n
}

func (c *cursor) improvedMinMax(s *Stats) {
	s.ClusteringTypes = c.typeList("clustering type")
	if c.err != nil {
		return
	}
	fixed := fixedLengths(s.ClusteringTypes)
	s.CoveredClustering.Start = c.bound(fixed, "covered clustering start")
	s.CoveredClustering.End = c.bound(fixed, "covered clustering end")
}

func (c *cursor) optionalUUID(what string) *UUID {
	at := c.pos
	switch c.u8(what + " presence byte") {
	case 0:
		return nil
	case 1:
		var u UUID
		copy(u[:], c.bytes(16, what))
		return &u
	default:
		c.fail(at, what+" presence byte 0 or 1", nil)
		return nil
	}
}

func appendOptionalUUID(dst []byte, u *UUID) []byte {
	if u == nil {
		return append(dst, 0)
	}
	return append(append(dst, 1), u[:]...)
}

func appendCommitLogPosition(dst []byte, p CommitLogPosition) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.SegmentID))
	return binary.BigEndian.AppendUint32(dst, uint32(p.Position))
}

func (s *Stats) appendTo(dst []byte, v format.Version) ([]byte, error) {
	var err error
	if dst, err = s.PartitionSizes.appendTo(dst, "estimated partition size histogram"); err != nil {
		return dst, err
	}
	if dst, err = s.CellsPerPartition.appendTo(dst, "estimated cells per partition histogram"); err != nil {
		return dst, err
	}
	dst = appendCommitLogPosition(dst, s.CommitLogUpperBound)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.MinTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.MaxTimestamp))
	if dst, err = appendLocalDeletionTime(dst, v, s.MinLocalDeletionTime, "min local deletion time"); err != nil {
		return dst, err
	}
	if dst, err = appendLocalDeletionTime(dst, v, s.MaxLocalDeletionTime, "max local deletion time"); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.MinTTL))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.MaxTTL))
	dst = appendF64(dst, s.CompressionRatio)
	if dst, err = s.TombstoneDropTimes.appendTo(dst, v.HasUIntDeletionTime); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.Level))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.RepairedAt))
	if v.HasLegacyMinMax {
		if dst, err = appendLegacyValues(dst, s.LegacyMinClusteringValues, "legacy min clustering"); err != nil {
			return dst, err
		}
		if dst, err = appendLegacyValues(dst, s.LegacyMaxClusteringValues, "legacy max clustering"); err != nil {
			return dst, err
		}
	} else if v.HasImprovedMinMax {
		if dst, err = s.appendImprovedMinMax(dst); err != nil {
			return dst, err
		}
	}
	dst = appendBool(dst, s.HasLegacyCounterShards)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.TotalColumnsSet))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.TotalRows))
	if v.HasCommitLogLowerBound {
		dst = appendCommitLogPosition(dst, s.CommitLogLowerBound)
	}
	if v.HasCommitLogIntervals {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.CommitLogIntervals)))
		for _, iv := range s.CommitLogIntervals {
			dst = appendCommitLogPosition(dst, iv.Start)
			dst = appendCommitLogPosition(dst, iv.End)
		}
	}
	if v.HasPendingRepair {
		dst = appendOptionalUUID(dst, s.PendingRepair)
	}
	if v.HasIsTransient {
		dst = appendBool(dst, s.IsTransient)
	}
	if v.HasOriginatingHostID {
		dst = appendOptionalUUID(dst, s.OriginatingHostID)
	}
	if v.HasPartitionLevelDeletions {
		dst = appendBool(dst, s.HasPartitionLevelDeletions)
	}
	if v.HasImprovedMinMax && v.HasLegacyMinMax {
		if dst, err = s.appendImprovedMinMax(dst); err != nil {
			return dst, err
		}
	}
	if v.HasKeyRange {
		if s.FirstKey == nil || s.LastKey == nil {
			return dst, fmt.Errorf("stats: %s stores the first and last partition keys but FirstKey or LastKey is not set", v.Name)
		}
		dst = appendVintBytes(dst, s.FirstKey)
		dst = appendVintBytes(dst, s.LastKey)
	}
	if v.HasTokenSpaceCoverage {
		dst = appendF64(dst, s.TokenSpaceCoverage)
	}
	return dst, nil
}

func (s *Stats) appendImprovedMinMax(dst []byte) ([]byte, error) {
	dst = appendTypeList(dst, s.ClusteringTypes)
	fixed := fixedLengths(s.ClusteringTypes)
	for _, b := range []clustering.Prefix{s.CoveredClustering.Start, s.CoveredClustering.End} {
		if len(b.Values) > math.MaxUint16 {
			return dst, fmt.Errorf("stats: covered clustering bound has %d values", len(b.Values))
		}
		var err error
		if dst, err = clustering.AppendBound(dst, b, fixed); err != nil {
			return dst, fmt.Errorf("stats: covered clustering: %w", err)
		}
	}
	return dst, nil
}

// padding is how many bytes StatsMetadataSerializer.serializedSize counts
// beyond what serialize writes, for the values in s.
func (s *Stats) padding(v format.Version) int {
	n := 0
	if v.HasUIntDeletionTime {
		n += oaTombstonePadding * len(s.TombstoneDropTimes.Bins)
	}
	if v.HasLegacyMinMax && v.HasImprovedMinMax {
		// nc sizes the legacy values from the covered slice's bounds.
		est := legacyValuesSize(s.CoveredClustering.Start.Values) + legacyValuesSize(s.CoveredClustering.End.Values)
		got := legacyValuesSize(s.LegacyMinClusteringValues) + legacyValuesSize(s.LegacyMaxClusteringValues)
		n += max(est-got, 0)
	}
	return n
}
