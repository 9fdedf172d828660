package convert

import (
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// blockCutter feeds the index writer each partition's unfiltereds at their
// output positions, so that index blocks are cut anew from the rows: a
// second decoder reads the source in step with the relinker (which copies
// bodies without decoding them) for the clusterings and the range
// deletions, and the relinker's events give each unfiltered's output
// start and end.
type blockCutter struct {
	dec    *rows.Decoder
	src    *sstable.SSTable
	iw     *writer.IndexWriter
	counts *Counts
	h      rows.PartitionHeader
}

func (c *blockCutter) partition(pr *partitionResult, events []event) error {
	dataPath := c.src.Path(format.ComponentData)
	if pos := c.dec.Source().Pos(); pos != pr.oldStart {
		return fmt.Errorf("%s: internal error: the index decoder is at byte %d, the partition starts at %d", dataPath, pos, pr.oldStart)
	}
	if err := c.dec.ReadPartitionHeader(&c.h); err != nil {
		return err
	}
	c.iw.StartPartition(pr.key, pr.newStart, pr.deletion)
	i := 0
	for {
		u, err := c.dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		if u.Kind == rows.KindStaticRow {
			continue
		}
		if i+1 >= len(events) || events[i].old != u.Offset-pr.oldStart {
			return corrupt.New(dataPath, "Data.db", u.Offset, "the unfiltered the copy found at this position", fmt.Errorf("partition %x, unfiltered %d", pr.key, i))
		}
		if err := c.iw.Add(u, events[i].new, events[i+1].new); err != nil {
			return fmt.Errorf("%s: %w", dataPath, err)
		}
		i++
	}
	if i != len(events)-2 {
		return corrupt.New(dataPath, "Data.db", pr.oldStart, fmt.Sprintf("%d unfiltereds in the partition, as the copy found", len(events)-2), fmt.Errorf("decoded %d", i))
	}
	if err := c.iw.EndPartition(events[0].new, pr.newSize); err != nil {
		return fmt.Errorf("%s: %w", dataPath, err)
	}
	last := c.iw.Last()
	if last.Indexed {
		c.counts.add(PlaceIndexEntry, last.Deletion)
		for _, m := range last.Markers {
			if m == nil {
				c.counts.BlocksWithoutMarker++
			} else {
				c.counts.add(PlaceIndexBlock, *m)
			}
		}
	}
	return nil
}
