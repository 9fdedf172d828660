// Package format decodes the components of Cassandra big-format sstables.
// Every decoder is driven by one Version value whose feature flags mirror
// BigFormat.BigVersion, so version-specific packages (format/nc, format/oa)
// only name versions and hold what truly differs.
package format

import (
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// Version is a big-format sstable version ("ma".."oa") and the layout
// features it implies.
type Version struct {
	Name string

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
	}, nil
}

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
