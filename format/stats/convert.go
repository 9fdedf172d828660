package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
)

// Loss is a value that does not survive a conversion unchanged, or that
// the target version needs and the source cannot provide.
type Loss struct {
	Field  string // e.g. "Stats.MaxLocalDeletionTime"
	Reason string
}

func (l Loss) String() string { return l.Field + ": " + l.Reason }

// Convert returns the statistics an sstable rewritten in version to would
// carry, given the same data: version-specific fields are filled the way
// Cassandra derives them when it reads the source version, dropped when
// the target has no place for them, and narrowed where the target's
// layout is narrower. Each change that loses information, and each value
// the target needs but the source lacks, is reported as a Loss.
//
// The result shares byte slices (keys, clustering values, the cardinality
// sketch) with s; s is not modified. When the version changes, trailing
// bytes are dropped so the result encodes with the padding Cassandra would
// write; converting to the same version keeps them, for an exact copy.
func (s *Statistics) Convert(to format.Version) (*Statistics, []Loss, error) {
	from := s.Version
	if from.Name == "" {
		return nil, nil, errors.New("stats: Convert needs the source version (Statistics.Version)")
	}
	out := s.clone()
	if from.Name == to.Name {
		return out, nil, nil
	}
	out.Version = to
	var losses []Loss
	lose := func(field, format string, args ...any) {
		losses = append(losses, Loss{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	for _, t := range []*[]byte{trailingOf(out.Validation), trailingOf(out.Compaction), trailingOf(out.Stats), trailingOf(out.Header)} {
		if t != nil {
			*t = nil
		}
	}
	if st := out.Stats; st != nil {
		var headerClustering []TypeName
		if out.Header != nil {
			headerClustering = out.Header.ClusteringTypes
		}
		convertStats(st, from, to, headerClustering, lose)
	}
	return out, losses, nil
}

func trailingOf(c any) *[]byte {
	switch m := c.(type) {
	case *Validation:
		if m != nil {
			return &m.TrailingBytes
		}
	case *Compaction:
		if m != nil {
			return &m.TrailingBytes
		}
	case *Stats:
		if m != nil {
			return &m.TrailingBytes
		}
	case *Header:
		if m != nil {
			return &m.TrailingBytes
		}
	}
	return nil
}

func convertStats(st *Stats, from, to format.Version, headerClustering []TypeName, lose func(string, string, ...any)) {
	// Local deletion times: signed ints up to nc, unsigned from oa.
	for _, f := range []struct {
		name string
		t    *int64
	}{{"Stats.MinLocalDeletionTime", &st.MinLocalDeletionTime}, {"Stats.MaxLocalDeletionTime", &st.MaxLocalDeletionTime}} {
		*f.t = convertDeletionTime(*f.t, to, f.name, lose)
	}
	// The tombstone histogram: Cassandra writes the bin count as the max
	// bin size, and each layout saturates what it cannot hold on read.
	bins := st.TombstoneDropTimes.Bins
	for i := range bins {
		b := &bins[i]
		field := fmt.Sprintf("Stats.TombstoneDropTimes.Bins[%d]", i)
		if to.HasUIntDeletionTime {
			if b.DeletionTime < 0 || b.DeletionTime > MaxDeletionTime {
				lose(field+".DeletionTime", "%d is outside oa's range; Cassandra reads it as %d", b.DeletionTime, int64(MaxDeletionTime))
				b.DeletionTime = MaxDeletionTime
			}
			if b.Count > math.MaxInt32 || b.Count < math.MinInt32 {
				c := int64(math.MaxInt32)
				if b.Count < 0 {
					c = math.MinInt32
				}
				lose(field+".Count", "%d does not fit oa's int; saturated to %d", b.Count, c)
				b.Count = c
			}
		} else if b.DeletionTime > LegacyMaxDeletionTime || b.DeletionTime < 0 {
			lose(field+".DeletionTime", "%d is outside the legacy range; Cassandra reads it as %d (2038 cap)", b.DeletionTime, LegacyMaxDeletionTime)
			b.DeletionTime = LegacyMaxDeletionTime
		}
	}
	st.TombstoneDropTimes.MaxBinSize = int32(len(bins))

	convertClusteringBounds(st, from, to, headerClustering, lose)

	// Commit log positions: one span before mc, an interval set from mc.
	if !from.HasCommitLogLowerBound {
		st.CommitLogLowerBound = NoCommitLogPosition
	}
	span := []CommitLogInterval{{Start: st.CommitLogLowerBound, End: st.CommitLogUpperBound}}
	if !from.HasCommitLogIntervals {
		st.CommitLogIntervals = span
	}
	if !to.HasCommitLogIntervals && !slices.Equal(st.CommitLogIntervals, span) {
		lose("Stats.CommitLogIntervals", "%s keeps only the span lower..upper bound of the %d commit log intervals", to.Name, len(st.CommitLogIntervals))
	}
	if !to.HasCommitLogLowerBound {
		if st.CommitLogLowerBound != NoCommitLogPosition {
			lose("Stats.CommitLogLowerBound", "%s does not store the commit log lower bound", to.Name)
		}
		st.CommitLogLowerBound = NoCommitLogPosition
	}
	if !to.HasCommitLogIntervals {
		st.CommitLogIntervals = []CommitLogInterval{{Start: st.CommitLogLowerBound, End: st.CommitLogUpperBound}}
	}

	if !to.HasPendingRepair {
		if st.PendingRepair != nil {
			lose("Stats.PendingRepair", "%s does not store a pending repair session (%s)", to.Name, *st.PendingRepair)
		}
		st.PendingRepair = nil
	}
	if !to.HasIsTransient {
		if st.IsTransient {
			lose("Stats.IsTransient", "%s cannot mark an sstable transient", to.Name)
		}
		st.IsTransient = false
	}
	if !to.HasOriginatingHostID {
		if st.OriginatingHostID != nil {
			lose("Stats.OriginatingHostID", "%s does not store the originating host id (%s)", to.Name, *st.OriginatingHostID)
		}
		st.OriginatingHostID = nil
	}

	// Without the marker, a reader assumes partition deletions whenever any
	// deletion time is recorded.
	inferred := st.MinLocalDeletionTime != NoDeletionTime
	if !from.HasPartitionLevelDeletions {
		st.HasPartitionLevelDeletions = inferred
	}
	if !to.HasPartitionLevelDeletions {
		if st.HasPartitionLevelDeletions != inferred {
			lose("Stats.HasPartitionLevelDeletions", "%s has no presence marker; readers will assume partition deletions may exist", to.Name)
		}
		st.HasPartitionLevelDeletions = false
	}

	if to.HasKeyRange && !from.HasKeyRange {
		lose("Stats.FirstKey/LastKey", "%s does not store the key range that %s needs; set them from the sstable's first and last partition keys before Encode", from.Name, to.Name)
	}
	if !to.HasKeyRange {
		st.FirstKey, st.LastKey = nil, nil
	}

	if !to.HasTokenSpaceCoverage {
		if !math.IsNaN(st.TokenSpaceCoverage) {
			lose("Stats.TokenSpaceCoverage", "%s does not store the token space coverage (%v)", to.Name, st.TokenSpaceCoverage)
		}
		st.TokenSpaceCoverage = NoTokenSpaceCoverage
	} else if !from.HasTokenSpaceCoverage {
		st.TokenSpaceCoverage = NoTokenSpaceCoverage // what a writer records outside unified compaction
	}
}

func convertDeletionTime(t int64, to format.Version, field string, lose func(string, string, ...any)) int64 {
	if t == NoDeletionTime {
		return t
	}
	if to.HasUIntDeletionTime {
		if t < 0 {
			lose(field, "negative deletion time %d is invalid in %s; Cassandra maps it to %d", t, to.Name, int64(InvalidDeletionTime))
			return InvalidDeletionTime
		}
		return t
	}
	if t > LegacyMaxDeletionTime {
		lose(field, "%d is past the 2038 limit of %s's signed int; capped to %d", t, to.Name, LegacyMaxDeletionTime)
		return LegacyMaxDeletionTime
	}
	return t
}

// legacyCovered is the covered slice StatsMetadata's reader derives from
// the legacy min/max values: inclusive bounds from md on, everything before
// (CASSANDRA-14861 made the earlier values untrustworthy).
func legacyCovered(v format.Version, minVals, maxVals [][]byte) Slice {
	if !v.HasAccurateMinMax {
		return AllClusterings
	}
	return Slice{
		Start: clustering.Prefix{Kind: clustering.InclStartBound, Values: minVals},
		End:   clustering.Prefix{Kind: clustering.InclEndBound, Values: maxVals},
	}
}

// untilNull is what the legacy writer stores for a bound: its values up to
// the first null.
func untilNull(vals [][]byte) [][]byte {
	for i, v := range vals {
		if v == nil {
			vals = vals[:i]
			break
		}
	}
	if len(vals) == 0 {
		return nil // as Decode gives for a count of 0
	}
	return vals
}

func equalValues(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return (x == nil) == (y == nil) && string(x) == string(y) })
}

func convertClusteringBounds(st *Stats, from, to format.Version, headerClustering []TypeName, lose func(string, string, ...any)) {
	if !from.HasImprovedMinMax {
		// What the reader of the source version derives.
		st.CoveredClustering = legacyCovered(from, st.LegacyMinClusteringValues, st.LegacyMaxClusteringValues)
		st.ClusteringTypes = slices.Clone(headerClustering)
		if to.HasImprovedMinMax && !from.HasAccurateMinMax {
			lose("Stats.CoveredClustering", "%s's min/max clustering values are not trusted (CASSANDRA-14861); the covered slice widens to all clusterings", from.Name)
		}
	}
	switch {
	case to.HasImprovedMinMax && to.HasLegacyMinMax:
		// nc writes the legacy values from the covered slice.
		st.LegacyMinClusteringValues = untilNull(st.CoveredClustering.Start.Values)
		st.LegacyMaxClusteringValues = untilNull(st.CoveredClustering.End.Values)
	case to.HasImprovedMinMax:
		if from.HasLegacyMinMax && from.HasImprovedMinMax &&
			(!equalValues(st.LegacyMinClusteringValues, untilNull(st.CoveredClustering.Start.Values)) ||
				!equalValues(st.LegacyMaxClusteringValues, untilNull(st.CoveredClustering.End.Values))) {
			lose("Stats.LegacyMinClusteringValues/LegacyMaxClusteringValues", "%s has no legacy min/max and these differ from the covered clustering slice", to.Name)
		}
		st.LegacyMinClusteringValues, st.LegacyMaxClusteringValues = nil, nil
	default: // legacy min/max only
		if from.HasImprovedMinMax {
			minVals := untilNull(st.CoveredClustering.Start.Values)
			maxVals := untilNull(st.CoveredClustering.End.Values)
			if back := legacyCovered(to, minVals, maxVals); !equalSlice(back, st.CoveredClustering) {
				lose("Stats.CoveredClustering", "%s keeps only the min/max values, read back as %s; bound kinds or nulls of %s are lost", to.Name, sliceString(back), sliceString(st.CoveredClustering))
			}
			st.LegacyMinClusteringValues, st.LegacyMaxClusteringValues = minVals, maxVals
		}
		st.CoveredClustering = legacyCovered(to, st.LegacyMinClusteringValues, st.LegacyMaxClusteringValues)
		st.ClusteringTypes = nil
	}
}

func equalSlice(a, b Slice) bool {
	return a.Start.Kind == b.Start.Kind && a.End.Kind == b.End.Kind &&
		equalValues(a.Start.Values, b.Start.Values) && equalValues(a.End.Values, b.End.Values)
}

func sliceString(s Slice) string {
	return fmt.Sprintf("%s(%d values)..%s(%d values)", s.Start.Kind, len(s.Start.Values), s.End.Kind, len(s.End.Values))
}

// clone copies s deeply enough that Convert can change any field of the
// copy; byte contents are shared.
func (s *Statistics) clone() *Statistics {
	out := &Statistics{Version: s.Version}
	if s.Validation != nil {
		v := *s.Validation
		out.Validation = &v
	}
	if s.Compaction != nil {
		c := *s.Compaction
		out.Compaction = &c
	}
	if s.Stats != nil {
		st := *s.Stats
		st.PartitionSizes = cloneHistogram(st.PartitionSizes)
		st.CellsPerPartition = cloneHistogram(st.CellsPerPartition)
		st.TombstoneDropTimes.Bins = slices.Clone(st.TombstoneDropTimes.Bins)
		st.LegacyMinClusteringValues = slices.Clone(st.LegacyMinClusteringValues)
		st.LegacyMaxClusteringValues = slices.Clone(st.LegacyMaxClusteringValues)
		st.ClusteringTypes = slices.Clone(st.ClusteringTypes)
		st.CoveredClustering.Start.Values = slices.Clone(st.CoveredClustering.Start.Values)
		st.CoveredClustering.End.Values = slices.Clone(st.CoveredClustering.End.Values)
		st.CommitLogIntervals = slices.Clone(st.CommitLogIntervals)
		if st.PendingRepair != nil {
			u := *st.PendingRepair
			st.PendingRepair = &u
		}
		if st.OriginatingHostID != nil {
			u := *st.OriginatingHostID
			st.OriginatingHostID = &u
		}
		out.Stats = &st
	}
	if s.Header != nil {
		h := *s.Header
		h.ClusteringTypes = slices.Clone(h.ClusteringTypes)
		h.StaticColumns = slices.Clone(h.StaticColumns)
		h.RegularColumns = slices.Clone(h.RegularColumns)
		out.Header = &h
	}
	return out
}

func cloneHistogram(h EstimatedHistogram) EstimatedHistogram {
	return EstimatedHistogram{Offsets: slices.Clone(h.Offsets), Buckets: slices.Clone(h.Buckets)}
}
