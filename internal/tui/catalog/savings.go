package catalog

import (
	"fmt"
	"strings"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/oa"
)

// Savings is what rewriting a legacy sstable as oa would save, from
// convert.Estimate: every component produced in memory and counted,
// Data.db recompressed chunk by chunk.
type Savings struct {
	Before, After int64 // all components, bytes on disk
	// DataBefore/After and IndexBefore/After are Data.db and Index.db.
	DataBefore, DataAfter   int64
	IndexBefore, IndexAfter int64
	// LiveHeaders is the number of LIVE partition DeletionTimes (12 -> 1 byte).
	LiveHeaders int64
	// LiveIndexEntries is the number of LIVE promoted-index DeletionTimes.
	LiveIndexEntries int64
	// Components are every component's size now and as oa, on disk.
	Components []convert.Component
	// DataUncompressed is Data.db's uncompressed length now and as oa.
	DataUncompressed convert.Component
	// From is the sstable's version.
	From format.Version
}

// Saved is the bytes the rewrite saves on disk, all components together
// (negative when the oa files would be larger).
func (s *Savings) Saved() int64 { return s.Before - s.After }

// NeedsConversion reports whether the sstable is in a legacy layout that oa
// would shrink (its DeletionTimes are 12 bytes).
func (t *Table) NeedsConversion() bool {
	return t.S.Version().DeletionTimeLayout() != oa.Version.DeletionTimeLayout()
}

// EstimateOA estimates the oa rewrite; progress gets Data.db bytes done.
func (t *Table) EstimateOA(progress func(done, total int64)) (*Savings, error) {
	res, err := convert.Estimate(t.DataPath(), convert.Options{To: oa.Version, Access: t.access, Progress: progress})
	if err != nil {
		return nil, err
	}
	s := &Savings{
		LiveHeaders:      res.Counts.Live[convert.PlacePartitionHeader],
		LiveIndexEntries: res.Counts.Live[convert.PlaceIndexEntry],
		Components:       res.Components,
		DataUncompressed: res.DataUncompressed,
		From:             t.S.Version(),
	}
	for _, c := range res.Components {
		s.Before += c.Before
		s.After += c.After
		switch c.Name {
		case format.ComponentData:
			s.DataBefore, s.DataAfter = c.Before, c.After
		case format.ComponentIndex:
			s.IndexBefore, s.IndexAfter = c.Before, c.After
		}
	}
	return s, nil
}

// Explain says, component by component, why the oa files are smaller or
// larger: the DeletionTimes that shrink from 12 bytes to 1 in Data.db and
// Index.db, and the Statistics.db fields oa's layout adds or drops
// compared with the source version. One line per cause; sizes are bytes
// on disk, Data.db's uncompressed change beside its on-disk one.
func (s *Savings) Explain() []string {
	var out []string
	change := func(name string) (convert.Component, bool) {
		for _, c := range s.Components {
			if c.Name == name {
				return c, c.Before != c.After
			}
		}
		return convert.Component{Name: name}, false
	}
	var dt []string
	if c, ok := change(format.ComponentData); ok {
		dt = append(dt, fmt.Sprintf("Data.db %s (%s uncompressed)", delta(c.After-c.Before), delta(s.DataUncompressed.After-s.DataUncompressed.Before)))
	}
	if c, ok := change(format.ComponentIndex); ok {
		dt = append(dt, "Index.db "+delta(c.After-c.Before))
	}
	if len(dt) > 0 || s.LiveHeaders+s.LiveIndexEntries > 0 {
		out = append(out, fmt.Sprintf("%s: DeletionTimes of %d partition headers and %d index entries take 1 byte instead of 12",
			joinOr(dt, "Data.db, Index.db unchanged"), s.LiveHeaders, s.LiveIndexEntries))
	}
	if c, ok := change(format.ComponentStatistics); ok {
		out = append(out, fmt.Sprintf("Statistics.db %s: %s", delta(c.After-c.Before), StatisticsChange(s.From)))
	}
	for _, c := range s.Components {
		if c.Before == c.After {
			continue
		}
		switch c.Name {
		case format.ComponentData, format.ComponentIndex, format.ComponentStatistics:
		case format.ComponentCompressionInfo, format.ComponentCRC:
			// One entry per chunk of Data.db, whose length changed.
			out = append(out, fmt.Sprintf("%s %s: one entry per Data.db chunk, and Data.db has %s chunks",
				c.Name, delta(c.After-c.Before), map[bool]string{true: "fewer", false: "more"}[c.After < c.Before]))
		case format.ComponentDigest:
			// The CRC32 of Data.db is written as decimal text.
			d, more := c.After-c.Before, "more"
			if d < 0 {
				d, more = -d, "fewer"
			}
			out = append(out, fmt.Sprintf("%s %s: the new Data.db's CRC32 is written with %d %s decimal digit%s",
				c.Name, delta(c.After-c.Before), d, more, map[bool]string{true: "", false: "s"}[d == 1]))
		default:
			out = append(out, c.Name+" "+delta(c.After-c.Before))
		}
	}
	return out
}

// StatisticsChange says which Statistics.db fields the oa layout stores
// that version `from` does not, and which it drops (the version flags of
// format.Version, as BigFormat defines them).
func StatisticsChange(from format.Version) string {
	oa := oa.Version
	var adds, drops []string
	add := func(has, hasOA bool, what string) {
		switch {
		case hasOA && !has:
			adds = append(adds, what)
		case has && !hasOA:
			drops = append(drops, what)
		}
	}
	add(from.HasMetadataChecksum, oa.HasMetadataChecksum, "metadata checksums")
	add(from.HasPendingRepair, oa.HasPendingRepair, "pending repair")
	add(from.HasIsTransient, oa.HasIsTransient, "the transient flag")
	add(from.HasOriginatingHostID, oa.HasOriginatingHostID, "the originating host")
	add(from.HasKeyRange, oa.HasKeyRange, "the first and last key")
	add(from.HasImprovedMinMax, oa.HasImprovedMinMax, "clustering bounds")
	add(from.HasPartitionLevelDeletions, oa.HasPartitionLevelDeletions, "the partition-deletion marker")
	add(from.HasTokenSpaceCoverage, oa.HasTokenSpaceCoverage, "token-space coverage")
	add(from.HasLegacyMinMax, oa.HasLegacyMinMax, "the legacy min/max clustering values")
	var parts []string
	if len(adds) > 0 {
		parts = append(parts, "oa adds "+joinAnd(adds))
	}
	if len(drops) > 0 {
		parts = append(parts, "drops "+joinAnd(drops))
	}
	if len(parts) == 0 {
		return "the histograms and compression ratio are recomputed"
	}
	return strings.Join(parts, ", ")
}

// delta renders a size change with its sign: "+12 B", "−55 B".
func delta(n int64) string {
	switch {
	case n > 0:
		return fmt.Sprintf("+%s B", count(n))
	case n < 0:
		return fmt.Sprintf("−%s B", count(-n))
	}
	return "±0 B"
}

func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func joinAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func joinOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}
