package sstable

import (
	"errors"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// CollectStats decodes every row of Data.db, on every core (Segmented),
// and returns the stats component Cassandra's writer would collect from
// them (stats.NewBoundsCollector, Fill): the bounds and counts a rewrite
// writes as the rows' own rather than the source's (stats.TakeCollected),
// and what verify holds Statistics.db to. The partition sizes are the
// source's. stop, when not nil, is polled between partitions: once it
// returns true the walk ends with ErrCollectStopped. content, when not
// nil, receives the rows.Digest of every partition decoded: a rewrite
// that copies the rows compares it with its output's (verify.Written).
func (s *SSTable) CollectStats(o SegmentOptions, stop func() bool, content *rows.Digest) (*stats.Stats, error) {
	types := s.ClusteringTypes()
	total := stats.NewBoundsCollector(types)
	type part struct {
		col *stats.Collector
		dg  rows.Digest
	}
	if content != nil {
		content.Reset()
	}
	err := Segmented(s, o,
		func(p *part) {
			if p.col == nil {
				p.col = stats.NewBoundsCollector(types)
			} else {
				p.col.Reset()
			}
			p.dg.Reset()
		},
		func(_ Segment, dec *rows.Decoder, p *part) error {
			if content != nil {
				dec.SetTap(p.dg.Unfiltered)
			} else {
				dec.SetTap(nil)
			}
			return nil
		},
		func(h *rows.PartitionHeader, dec *rows.Decoder, p *part) error {
			if stop != nil && stop() {
				return ErrCollectStopped
			}
			p.col.PartitionDeletion(h.Deletion)
			if content != nil {
				p.dg.Partition(h.Key, h.Deletion)
			}
			var cells int64
			for {
				u, err := dec.Next(false)
				if err != nil {
					return err
				}
				if u == nil {
					break
				}
				cells += p.col.Unfiltered(u)
			}
			p.col.EndPartition(dec.Pos()-h.Offset, cells)
			if content != nil {
				p.dg.End()
			}
			return nil
		},
		func(p *part) error {
			total.Merge(p.col)
			if content != nil {
				content.Add(&p.dg)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	var out stats.Stats
	total.Fill(&out)
	return &out, nil
}

// ErrCollectStopped is CollectStats's error when its stop said so.
var ErrCollectStopped = errors.New("sstable: statistics collection stopped")
