package catalog

import (
	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
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
}

// Saved is the bytes the rewrite saves.
func (s *Savings) Saved() int64 { return s.Before - s.After }

// NeedsConversion reports whether the sstable is in a legacy layout that oa
// would shrink (its DeletionTimes are 12 bytes).
func (t *Table) NeedsConversion() bool {
	return t.S.Version().DeletionTimeLayout() != format.MustVersion("oa").DeletionTimeLayout()
}

// EstimateOA estimates the oa rewrite; progress gets Data.db bytes done.
func (t *Table) EstimateOA(progress func(done, total int64)) (*Savings, error) {
	res, err := convert.Estimate(t.DataPath(), convert.Options{To: format.MustVersion("oa"), Access: t.access, Progress: progress})
	if err != nil {
		return nil, err
	}
	s := &Savings{
		LiveHeaders:      res.Counts.Live[convert.PlacePartitionHeader],
		LiveIndexEntries: res.Counts.Live[convert.PlaceIndexEntry],
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
