// Package format is what every decoder of Cassandra's sstables (big and
// BTI) starts from: the Version, whose feature flags mirror
// BigFormat.BigVersion and BtiFormat.BtiVersion, so that version-specific
// packages (format/nc, format/oa) only name versions and hold what truly
// differs; the Descriptor, an sstable's name and its components' file
// names and TOC.txt; and the data-directory layout: table directory names
// (TableOfDir) and Find, which turns paths into sstables the way the
// commands take them. The components themselves are decoded by the
// packages beside it (format/rows, format/stats, format/sstable...).
package format

import (
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// Format names an sstable format: the second field of a component's file name.
type Format string

const (
	Big Format = "big" // Index.db + Summary.db (BigFormat)
	BTI Format = "bti" // Partitions.db + Rows.db tries (BtiFormat, Cassandra 5.0)
)

// Version is an sstable version ("ma".."oa" big, "da" bti) and the layout
// features it implies.
type Version struct {
	Name   string
	Format Format

	HasCommitLogLowerBound     bool // mb+
	HasCommitLogIntervals      bool // mc+
	HasAccurateMinMax          bool // md..nz
	HasLegacyMinMax            bool // ma..nz: min/max clustering values in stats
	HasOriginatingHostID       bool // me+, nb+
	HasMaxCompressedLength     bool // na+: uncompressed chunks in compressed files
	HasPendingRepair           bool // na+
	HasIsTransient             bool // na+
	HasMetadataChecksum        bool // na+
	HasOldBloomFilterFormat    bool // before na
	HasImprovedMinMax          bool // nc+: min/max clustering as slice bounds
	HasPartitionLevelDeletions bool // nc+: presence marker in stats
	HasKeyRange                bool // nc+: first/last key in stats
	HasUIntDeletionTime        bool // oa+: compact DeletionTime, unsigned ldt
	HasTokenSpaceCoverage      bool // oa+
	// CheckedIntVInts: the Cassandra release that writes this version
	// (5.0: nc, oa, da) reads int-sized vints (deletion-time and TTL deltas,
	// EncodingStats minima) with a checked cast and refuses values that do
	// not fit (CASSANDRA-18099). The 3.x/4.x releases that wrote ma..nb cast
	// them with (int) and add in 32 bits, so overflowed values wrap
	// (CASSANDRA-14092); this tool reads each version as its release does.
	CheckedIntVInts bool
}

// ParseVersion derives the feature flags of a big-format version the way
// BigVersion does. The nc flags come from BigFormat.java before
// CASSANDRA-19010 removed nc from readers.
func ParseVersion(name string) (Version, error) {
	if len(name) != 2 || name[0] < 'a' || name[0] > 'z' || name[1] < 'a' || name[1] > 'z' {
		return Version{}, fmt.Errorf("sstable version %q is not two lowercase letters", name)
	}
	if name < "ma" {
		return Version{}, fmt.Errorf("sstable version %q predates Cassandra 3.0 (ma); only ma and later are supported", name)
	}
	if name[0] > 'o' {
		return Version{}, fmt.Errorf("sstable version %q is newer than oa, the latest big-format version this tool knows", name)
	}
	m, n := name[0] == 'm', name[0] == 'n'
	return Version{
		Name:                       name,
		Format:                     Big,
		HasCommitLogLowerBound:     name >= "mb",
		HasCommitLogIntervals:      name >= "mc",
		HasAccurateMinMax:          (m && name[1] >= 'd') || n,
		HasLegacyMinMax:            m || n,
		HasOriginatingHostID:       name >= "nb" || (m && name[1] >= 'e'),
		HasMaxCompressedLength:     name >= "na",
		HasPendingRepair:           name >= "na",
		HasIsTransient:             name >= "na",
		HasMetadataChecksum:        name >= "na",
		HasOldBloomFilterFormat:    name < "na",
		HasImprovedMinMax:          name >= "nc",
		HasPartitionLevelDeletions: name >= "nc",
		HasKeyRange:                name >= "nc",
		HasUIntDeletionTime:        name >= "oa",
		HasTokenSpaceCoverage:      name >= "oa",
		CheckedIntVInts:            name >= "nc",
	}, nil
}

// ParseFormatVersion derives the feature flags of a version of either format.
// BtiVersion (BtiFormat.java) has one version, da, with every feature of oa
// (compact DeletionTime, unsigned deletion times, token space coverage, key
// range) and accurate min/max; its Data.db, Statistics.db, CompressionInfo.db
// and Filter.db share big's layouts.
func ParseFormatVersion(format Format, name string) (Version, error) {
	switch format {
	case Big:
		return ParseVersion(name)
	case BTI:
		if len(name) != 2 || name[0] < 'a' || name[0] > 'z' || name[1] < 'a' || name[1] > 'z' {
			return Version{}, fmt.Errorf("sstable version %q is not two lowercase letters", name)
		}
		if name < "da" {
			return Version{}, fmt.Errorf("bti sstable version %q predates da, the first trie-indexed version", name)
		}
		if name[0] > 'd' {
			return Version{}, fmt.Errorf("bti sstable version %q is newer than da, the latest trie-indexed version this tool knows", name)
		}
		return Version{
			Name:                       name,
			Format:                     BTI,
			HasCommitLogLowerBound:     true,
			HasCommitLogIntervals:      true,
			HasAccurateMinMax:          true,
			HasOriginatingHostID:       true,
			HasMaxCompressedLength:     true,
			HasPendingRepair:           true,
			HasIsTransient:             true,
			HasMetadataChecksum:        true,
			HasImprovedMinMax:          true,
			HasPartitionLevelDeletions: true,
			HasKeyRange:                true,
			HasUIntDeletionTime:        true,
			HasTokenSpaceCoverage:      true,
			CheckedIntVInts:            true,
		}, nil
	}
	return Version{}, fmt.Errorf("unknown sstable format %q (expected big or bti)", format)
}

// Released returns the versions Cassandra's releases have written, oldest
// first, big then BTI: the version histories in BigFormat.BigVersion
// (ma 3.0.0 .. me 3.0.25/3.11.11, na and nb 4.0, nc as 5.0's development
// builds wrote it before CASSANDRA-19010, oa 5.0) and BtiFormat.BtiVersion
// (da 5.0). These are the names the tools offer (shell completion,
// --version); ParseVersion and ParseFormatVersion read any name within
// their ranges, as Cassandra's readers do.
func Released() []Version {
	var out []Version
	for _, name := range []string{"ma", "mb", "mc", "md", "me", "na", "nb", "nc", "oa"} {
		out = append(out, MustVersion(name))
	}
	da, _ := ParseFormatVersion(BTI, "da")
	return append(out, da)
}

// IsBTI reports whether the sstable is trie-indexed (Partitions.db and
// Rows.db instead of Index.db and Summary.db).
func (v Version) IsBTI() bool { return v.Format == BTI }

// MustVersion is ParseVersion for names known at compile time.
func MustVersion(name string) Version {
	v, err := ParseVersion(name)
	if err != nil {
		panic(err)
	}
	return v
}

// DeletionTimeLayout is the DeletionTime serialization this version uses in
// partition headers, index entries, index blocks and stats.
func (v Version) DeletionTimeLayout() deletiontime.Layout {
	if v.HasUIntDeletionTime {
		return deletiontime.Compact
	}
	return deletiontime.Legacy
}

func (v Version) String() string { return v.Name }

// IntDelta is minimum + delta for an int-sized vint delta (a deletion time
// or TTL relative to the EncodingStats minimum, or a minimum relative to
// its epoch), computed as this version's Cassandra release computes it.
// fits reports whether raw is a Java int (sign-extended when negative, as
// writeUnsignedVInt32 writes one). Releases with checked casts refuse a raw
// value that does not fit (the caller reports it) and add in 64 bits;
// 3.x/4.x truncate with (int) and add in 32 bits, so the sum wraps.
func (v Version) IntDelta(raw uint64, minimum int64) (value int64, fits bool) {
	delta := int32(raw)
	fits = int64(delta) == int64(raw)
	if v.CheckedIntVInts {
		return int64(delta) + minimum, fits
	}
	return int64(delta + int32(minimum)), fits
}
