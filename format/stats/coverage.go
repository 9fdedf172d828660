package stats

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
)

// A Mismatch is a statistic of the stats component that is not what the
// rows give (what a Collector gathers from them).
//
// Statistics.db's bounds and counts are what Cassandra's reads and
// compactions trust without looking at the rows: a single-partition read
// leaves out an sstable whose maximum timestamp is below a partition
// deletion already read (SinglePartitionReadCommand
// .queryMemtableAndDiskInternal), or whose covered clusterings miss the
// slice asked for, unless hasPartitionLevelDeletions says a partition
// deletion may be there (SinglePartitionReadCommand.shouldInclude,
// PartitionRangeReadCommand); compaction drops a whole sstable whose
// maximum local deletion time is past gc_grace
// (CompactionController.getFullyExpiredSSTables) and purges tombstones by
// the minimum timestamps of the sstables beside them. Statistics that
// cover more than the rows (ScyllaDB writes timestamps of Long.MIN_VALUE
// to Long.MAX_VALUE, counts an empty static row) only make these look at
// more than they need: Wider. Statistics that cover less (Narrower) can
// make them skip or drop live data.
type Mismatch struct {
	// Field is what differs: "timestamps", "local deletion times",
	// "TTLs", "covered clusterings", "totalRows", "totalColumnsSet" or
	// "hasPartitionLevelDeletions".
	Field string `json:"field"`
	// Stored and Data are the values, as Statistics.db holds them and as
	// the rows give them.
	Stored string `json:"stored"`
	Data   string `json:"data"`
	// Narrower is set when the stored value covers less than the rows.
	Narrower bool `json:"narrower"`
}

func (m Mismatch) String() string {
	switch m.Field {
	case "totalRows", "totalColumnsSet":
		if m.Narrower {
			return fmt.Sprintf("%s %s is below Data.db's %s", m.Field, m.Stored, m.Data)
		}
		return fmt.Sprintf("%s %s is above Data.db's %s", m.Field, m.Stored, m.Data)
	case "hasPartitionLevelDeletions":
		if m.Narrower {
			return "hasPartitionLevelDeletions is false, but Data.db holds partition deletions"
		}
		return "hasPartitionLevelDeletions is true, but Data.db holds no partition deletion"
	}
	if m.Narrower {
		return fmt.Sprintf("%s %s do not cover Data.db's %s", m.Field, m.Stored, m.Data)
	}
	return fmt.Sprintf("%s %s cover more than Data.db's %s", m.Field, m.Stored, m.Data)
}

// Consequence says what a narrower value could make Cassandra do, for a
// message; "" for a wider one.
func (m Mismatch) Consequence() string {
	if !m.Narrower {
		return ""
	}
	switch m.Field {
	case "timestamps":
		return "reads skip an sstable by its maximum timestamp and compaction purges tombstones by the minimum, so live data could be missed"
	case "local deletion times":
		return "compaction drops a whole sstable by its maximum local deletion time, so live data could be dropped"
	case "covered clusterings", "hasPartitionLevelDeletions":
		return "reads skip an sstable whose covered clusterings miss the slice asked for, so live data or a deletion could be missed"
	}
	return "the counts are below what Data.db holds"
}

// CompareCollected compares the stats component stored, as version v's
// reader gives it, with data, what a Collector gathered from the same
// sstable's rows (Fill), for every bound and count reads or compactions
// rely on: the timestamps, local deletion times and TTLs, the covered
// clusterings (nc and oa store them; md..nb's legacy min/max values are
// compared as their reader takes them, inclusive; before md Cassandra
// ignores them, CASSANDRA-14861), the row and column counts and, from nc,
// the partition-level deletion marker. It returns nil when every one is
// exactly the rows'. clusteringTypes orders the clusterings (nil entries
// compare as bytes). The histograms are not compared: the partition sizes
// are checked on their own, and the cells per partition and tombstone drop
// times are estimates no read relies on.
func CompareCollected(stored, data *Stats, v format.Version, clusteringTypes []*cqltype.Type) []Mismatch {
	var out []Mismatch
	rangeOf := func(field string, sMin, sMax, dMin, dMax int64, show func(int64) string) {
		if sMin == dMin && sMax == dMax {
			return
		}
		out = append(out, Mismatch{Field: field, Stored: show(sMin) + ".." + show(sMax), Data: show(dMin) + ".." + show(dMax),
			Narrower: sMin > dMin || sMax < dMax})
	}
	rangeOf("timestamps", stored.MinTimestamp, stored.MaxTimestamp, data.MinTimestamp, data.MaxTimestamp, showLong)
	rangeOf("local deletion times", stored.MinLocalDeletionTime, stored.MaxLocalDeletionTime, data.MinLocalDeletionTime, data.MaxLocalDeletionTime, showDeletionTime)
	rangeOf("TTLs", int64(stored.MinTTL), int64(stored.MaxTTL), int64(data.MinTTL), int64(data.MaxTTL), showLong)

	var sSlice, dSlice Slice
	compareSlices := true
	switch {
	case v.HasImprovedMinMax:
		sSlice, dSlice = stored.CoveredClustering, data.CoveredClustering
	case v.HasAccurateMinMax:
		// The legacy values are a bound's values with no kind; the reader
		// takes them as inclusive bounds. The rows' are compared the same
		// way, so that a range tombstone's exclusive bound is no mismatch.
		sSlice = stored.CoveredClustering
		dSlice = legacyCovered(v, untilNull(data.CoveredClustering.Start.Values), untilNull(data.CoveredClustering.End.Values))
	default:
		compareSlices = false
	}
	if compareSlices && !equalSlice(sSlice, dSlice) {
		covers := comparePrefixes(clusteringTypes, sSlice.Start, dSlice.Start) <= 0 &&
			comparePrefixes(clusteringTypes, sSlice.End, dSlice.End) >= 0
		out = append(out, Mismatch{Field: "covered clusterings", Stored: showSlice(clusteringTypes, sSlice), Data: showSlice(clusteringTypes, dSlice), Narrower: !covers})
	}

	count := func(field string, s, d int64) {
		if s != d {
			out = append(out, Mismatch{Field: field, Stored: fmt.Sprint(s), Data: fmt.Sprint(d), Narrower: s < d})
		}
	}
	count("totalRows", stored.TotalRows, data.TotalRows)
	count("totalColumnsSet", stored.TotalColumnsSet, data.TotalColumnsSet)
	if v.HasPartitionLevelDeletions && stored.HasPartitionLevelDeletions != data.HasPartitionLevelDeletions {
		out = append(out, Mismatch{Field: "hasPartitionLevelDeletions", Stored: fmt.Sprint(stored.HasPartitionLevelDeletions),
			Data: fmt.Sprint(data.HasPartitionLevelDeletions), Narrower: data.HasPartitionLevelDeletions})
	}
	return out
}

// TakeCollected sets the bounds and counts of s, a stats component of
// version to, to data's (what a Collector gathered from the rows written),
// as Cassandra's writer collects them for the rows it writes rather than
// carrying the source's: the timestamps, local deletion times (in to's
// range), TTLs, covered clusterings (and the legacy min/max values to
// stores, made from them as nc's writer makes them), the row and column
// counts and the partition-level deletion marker. The histograms, and
// what rows cannot give (commit log positions, repair state, level...),
// are left as they are. It returns what to cannot hold exactly, as
// Convert reports it; Convert's own losses of these fields (those
// IsCollectedField names) no longer apply.
func (s *Stats) TakeCollected(data *Stats, to format.Version) []Loss {
	var losses []Loss
	lose := func(field, format string, args ...any) {
		losses = append(losses, Loss{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	s.MinTimestamp, s.MaxTimestamp = data.MinTimestamp, data.MaxTimestamp
	s.MinLocalDeletionTime = convertDeletionTime(data.MinLocalDeletionTime, to, "Stats.MinLocalDeletionTime", lose)
	s.MaxLocalDeletionTime = convertDeletionTime(data.MaxLocalDeletionTime, to, "Stats.MaxLocalDeletionTime", lose)
	s.MinTTL, s.MaxTTL = data.MinTTL, data.MaxTTL
	covered := Slice{
		Start: clustering.Prefix{Kind: data.CoveredClustering.Start.Kind, Values: cloneValues(data.CoveredClustering.Start.Values)},
		End:   clustering.Prefix{Kind: data.CoveredClustering.End.Kind, Values: cloneValues(data.CoveredClustering.End.Values)},
	}
	switch {
	case to.HasImprovedMinMax:
		s.CoveredClustering = covered
		if to.HasLegacyMinMax {
			s.LegacyMinClusteringValues = untilNull(covered.Start.Values)
			s.LegacyMaxClusteringValues = untilNull(covered.End.Values)
		}
	default:
		s.LegacyMinClusteringValues = untilNull(covered.Start.Values)
		s.LegacyMaxClusteringValues = untilNull(covered.End.Values)
		s.CoveredClustering = legacyCovered(to, s.LegacyMinClusteringValues, s.LegacyMaxClusteringValues)
		if to.HasAccurateMinMax && !equalSlice(s.CoveredClustering, covered) {
			lose("Stats.CoveredClustering", "%s keeps only the min/max values, read back as %s; bound kinds or nulls of %s are lost", to.Name, sliceString(s.CoveredClustering), sliceString(covered))
		}
	}
	s.TotalRows, s.TotalColumnsSet = data.TotalRows, data.TotalColumnsSet
	if to.HasPartitionLevelDeletions {
		s.HasPartitionLevelDeletions = data.HasPartitionLevelDeletions
	} else if inferred := s.MinLocalDeletionTime != NoDeletionTime; inferred != data.HasPartitionLevelDeletions {
		lose("Stats.HasPartitionLevelDeletions", "%s has no presence marker; readers will assume partition deletions may exist", to.Name)
	}
	return losses
}

// IsCollectedField reports whether a Loss's field is one TakeCollected
// sets.
func IsCollectedField(field string) bool {
	switch field {
	case "Stats.MinLocalDeletionTime", "Stats.MaxLocalDeletionTime", "Stats.CoveredClustering",
		"Stats.LegacyMinClusteringValues/LegacyMaxClusteringValues", "Stats.HasPartitionLevelDeletions":
		return true
	}
	return false
}

func cloneValues(vals [][]byte) [][]byte {
	if vals == nil {
		return nil
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = append([]byte{}, v...)
		}
	}
	return out
}

// showLong names Java's extremes, which writers use for "none".
func showLong(v int64) string {
	switch v {
	case math.MinInt64:
		return "Long.MIN_VALUE"
	case math.MaxInt64:
		return "Long.MAX_VALUE"
	}
	return fmt.Sprint(v)
}

func showDeletionTime(v int64) string {
	if v == NoDeletionTime {
		return "none"
	}
	return fmt.Sprint(v)
}

// showSlice renders a slice of clusterings with its bound kinds and its
// values as CQL text (hex where a value does not render).
func showSlice(types []*cqltype.Type, s Slice) string {
	return showPrefix(types, s.Start) + ".." + showPrefix(types, s.End)
}

func showPrefix(types []*cqltype.Type, p clustering.Prefix) string {
	vals := make([]string, len(p.Values))
	for i, v := range p.Values {
		switch {
		case v == nil:
			vals[i] = "null"
		case i < len(types) && types[i] != nil:
			if s, err := types[i].Format(v); err == nil {
				vals[i] = s
				continue
			}
			fallthrough
		default:
			vals[i] = "0x" + hex.EncodeToString(v)
		}
	}
	return p.Kind.String() + "(" + strings.Join(vals, ", ") + ")"
}
