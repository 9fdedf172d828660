package convert

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
)

// The segmented copy relinks a big-to-big conversion on every core, in the
// walk that collects the statistics: one decode of the source, where the
// relinker and the collection each read it otherwise. Each worker of
// sstable.Segmented decodes its segment's rows for the statistics (and
// the digest verification compares), and relinks each partition into the
// segment's buffer from the frames the decoder hands its tap, with
// positions relative to the partition (the bytes of a relinked partition
// do not depend on where it lands). The calling goroutine takes the
// segments in Data.db order: it walks Index.db beside them, writes each
// partition's bytes, relinks its entry (relinkEntry, the events the
// worker recorded) and accounts for it (took), as copyOne does. The bytes
// are the one relinker's: both write through appendHeader and
// appendFrame.
//
// A partition that grows past relinkInMemory in a worker's buffer is
// dropped from it: the worker only collects from there to its segment's
// end, and the calling goroutine relinks those partitions itself (copyOne
// on its own cursor) when the segment's turn comes, so that memory stays
// bounded whatever a partition's size.

// relinkInMemory is the largest partition a worker relinks into memory (a
// variable for the tests).
var relinkInMemory = 4 << 20

// relinkSegment is a segment's share of the walk.
type relinkSegment struct {
	col *stats.Collector
	dg  rows.Digest
	rl  relinker // the worker's: appendHeader and appendFrame, its own counts
	// counts are what rl counted (rl.counts points here).
	counts Counts
	// buf holds the relinked partitions, one after another; parts says
	// where each is, events hold theirs, keys their keys.
	buf    []byte
	parts  []relinkedPart
	events []event
	keys   []byte
	// fallback is the source position of the first partition not
	// relinked here (-1: none); end is where the segment's last partition
	// ends in the source.
	fallback, end int64
	// The current unfiltered's frame and body, from the tap.
	prefix, body []byte
	tap          rows.Tap
}

// relinkedPart is one partition of a segment's buffer.
type relinkedPart struct {
	at                           int // where its bytes start in buf
	key                          [2]int
	events                       [2]int
	deletion                     deletiontime.DeletionTime
	oldStart, oldSize, newSize   int64
	oldHeaderSize, newHeaderSize int
}

func (g *relinkSegment) reset() {
	g.dg.Reset()
	g.rl.reflagged = false
	g.counts = Counts{}
	g.buf, g.parts, g.events, g.keys = g.buf[:0], g.parts[:0], g.events[:0], g.keys[:0]
	g.fallback, g.end = -1, -1
	g.prefix, g.body = nil, nil
}

// copySegmented is copyPartitions's copy for moved blocks: it relinks and
// collects the statistics in one sstable.Segmented walk.
func (rw *rewriter) copySegmented() error {
	src, content := rw.src, rw.collected.content
	types := src.ClusteringTypes()
	total := stats.NewBoundsCollector(types)
	if content != nil {
		content.Reset()
	}
	serial := rw.rl
	err := sstable.Segmented(src, sstable.SegmentOptions{},
		func(g *relinkSegment) {
			if g.col == nil {
				g.col = stats.NewBoundsCollector(types)
				g.rl = relinker{schema: serial.schema, to: serial.to, capDT: serial.capDT, file: serial.file}
				g.rl.counts = &g.counts
				g.tap = func(prefix, body []byte) {
					g.prefix, g.body = prefix, body
					if content != nil {
						g.dg.Unfiltered(prefix, body)
					}
				}
			} else {
				g.col.Reset()
			}
			g.reset()
		},
		func(_ sstable.Segment, dec *rows.Decoder, g *relinkSegment) error {
			dec.SetTap(g.tap)
			return nil
		},
		func(h *rows.PartitionHeader, dec *rows.Decoder, g *relinkSegment) error {
			return g.partition(h, dec, content != nil)
		},
		func(g *relinkSegment) error {
			total.Merge(g.col)
			if content != nil {
				content.Add(&g.dg)
			}
			rw.res.Counts.Add(&g.counts)
			rw.res.reflagged = rw.res.reflagged || g.rl.reflagged
			return rw.deliverRelinked(g)
		})
	if err != nil {
		return err
	}
	var data stats.Stats
	total.Fill(&data)
	rw.collected.data = &data
	return nil
}

// partition collects and relinks one partition on a worker.
func (g *relinkSegment) partition(h *rows.PartitionHeader, dec *rows.Decoder, digest bool) error {
	g.col.PartitionDeletion(h.Deletion)
	if digest {
		g.dg.Partition(h.Key, h.Deletion)
	}
	relink := g.fallback < 0
	p := relinkedPart{at: len(g.buf), oldStart: h.Offset, oldHeaderSize: h.Size, events: [2]int{len(g.events), len(g.events)}}
	var err error
	counted := g.counts // what a partition left to the calling goroutine must not have counted
	if relink {
		if g.buf, p.deletion, err = g.rl.appendHeader(g.buf, h); err != nil {
			return err
		}
		p.newHeaderSize = len(g.buf) - p.at
	}
	prevNew := int64(0) // partition-relative, as every position here
	var cells int64
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		cells += g.col.Unfiltered(u)
		if !relink {
			continue
		}
		newStart := int64(len(g.buf) - p.at)
		static := u.Kind == rows.KindStaticRow
		if !static {
			g.events = append(g.events, event{u.Offset - h.Offset, newStart})
		}
		if g.buf, err = g.rl.appendFrame(g.buf, g.prefix, u.ExtFlags, static, u.PrevSize, int64(len(g.body)), newStart, &prevNew, u.Offset); err != nil {
			return err
		}
		g.buf = append(g.buf, g.body...)
		if len(g.buf)-p.at > relinkInMemory {
			// Too large to hold: relinked by the calling goroutine.
			relink = false
			g.fallback = h.Offset
			g.buf, g.events = g.buf[:p.at], g.events[:p.events[0]]
			g.counts = counted
		}
	}
	p.oldSize = dec.Pos() - h.Offset
	g.col.EndPartition(p.oldSize, cells)
	if digest {
		g.dg.End()
	}
	g.end = dec.Pos()
	if !relink {
		return nil
	}
	g.events = append(g.events, event{p.oldSize - 1, int64(len(g.buf) - p.at)})
	g.buf = append(g.buf, rows.FlagEndOfPartition)
	p.newSize = int64(len(g.buf) - p.at)
	g.events = append(g.events, event{p.oldSize, p.newSize})
	p.events[1] = len(g.events)
	p.key = [2]int{len(g.keys), len(g.keys) + len(h.Key)}
	g.keys = append(g.keys, h.Key...)
	g.parts = append(g.parts, p)
	return nil
}

// errIndexEnded stops the segmented copy where Index.db ends before
// Data.db: copyPartitions reports it as after copyOne's last partition.
var errIndexEnded = errors.New("convert: Index.db ended")

// deliverRelinked writes a segment's relinked partitions in Data.db order
// with their Index.db entries, then relinks those the worker left to the
// calling goroutine.
func (rw *rewriter) deliverRelinked(g *relinkSegment) error {
	scan := rw.scan
	// The relinked partitions lie one after another in buf: written at
	// once, each starts at base + at.
	base := rw.dw.Pos()
	if _, err := rw.dw.Write(g.buf); err != nil {
		return err
	}
	for i := range g.parts {
		p := &g.parts[i]
		key := g.keys[p.key[0]:p.key[1]]
		if !scan.Next() {
			// As copyOne's loop ends (copyPartitions then says why).
			return errIndexEnded
		}
		e := scan.Entry()
		if e.Position != p.oldStart {
			return corrupt.New(rw.src.Path(format.ComponentIndex), "Index.db", scan.EntryPos(),
				fmt.Sprintf("the next partition's Data.db position %d", p.oldStart), fmt.Errorf("entry says %d", e.Position))
		}
		if !bytes.Equal(key, e.Key) {
			return rw.rl.corrupt(p.oldStart+2, fmt.Sprintf("the partition key %x that Index.db names", e.Key), fmt.Errorf("found key %x", key))
		}
		pr := partitionResult{key: key, deletion: p.deletion, oldStart: p.oldStart, newStart: base + int64(p.at),
			oldHeaderSize: p.oldHeaderSize, newHeaderSize: p.newHeaderSize, oldSize: p.oldSize, newSize: p.newSize}
		if err := rw.addEntry(e, &pr, g.events[p.events[0]:p.events[1]], scan.EntryPos()); err != nil {
			return err
		}
		rw.took(&pr)
	}
	if g.fallback < 0 {
		return nil
	}
	if rw.pos != g.fallback {
		return fmt.Errorf("%s: internal error: the segment's partitions end at byte %d, the rest starts at %d", rw.dataPath, rw.pos, g.fallback)
	}
	rw.rl.src = rw.src.Data().Cursor(g.fallback)
	rw.rl.dec = nil
	for rw.pos < g.end {
		more, err := rw.copyOne(g.end)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return nil
}
