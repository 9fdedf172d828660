package dump

import (
	"errors"
	"runtime"
	"sync"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// segmentSize is how many bytes of uncompressed Data.db a parallel dump
// hands a worker at a time (cut at the first partition start past it).
// Its JSON, about 8 times larger, fits in the segment's queue of blocks,
// so a worker can finish a segment while the writer is still on an
// earlier one.
const segmentSize = 512 << 10

// segmentBlocks is how many full blocks a segment's queue holds before
// its worker waits for the writer: with flushSize, 4 MiB, about the JSON
// of one segment. With the free list, a parallel dump holds at most
// about 2×workers×segmentBlocks blocks (20 MiB for two workers).
const segmentBlocks = 16

// All writes every partition of Data.db in order, as EachPartition and
// Partition would, skipping those whose key skip reports (skip may be
// nil; it must be safe for concurrent use). progress, when not nil, is
// called now and then with the Data.db offset reached. On error, All
// writes the output rendered before it and returns it.
//
// It walks Data.db with sstable.Segmented: with more than one worker
// (Options.Workers, default GOMAXPROCS), workers render consecutive
// segments of Data.db at once, cut at partition starts listed in
// Index.db, and the calling goroutine writes their blocks out in order
// as they come (each segment a Streamer), so memory stays bounded by the
// workers and their queues, whatever the partition sizes. Where the
// segments do not follow one another (Index.db disagrees with Data.db),
// Segmented goes on alone, and the partitions are rendered as Partition
// renders them, so the output is a single decoder's whatever the index
// holds.
func (d *Dumper) All(skip func(key []byte) bool, progress func(off int64)) error {
	if d.err != nil {
		return d.err
	}
	// What Begin (or earlier partitions) left in the buffer goes first.
	if err := d.Flush(); err != nil {
		return err
	}
	workers := d.o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := &segmentWalk{d: d, skip: skip, progress: progress, abort: make(chan struct{}),
		free: make(chan []byte, workers*(segmentBlocks+2))}
	err := sstable.Segmented(d.s, d.segmentOptions(w.stop), w.reset, w.begin, w.part, w.deliver)
	if err != nil {
		return d.fail(err)
	}
	return d.Flush()
}

// segmentOptions is how All cuts Data.db: segments of segmentSize (tests
// set others, and cuts that are no partition starts).
func (d *Dumper) segmentOptions(stop func()) sstable.SegmentOptions {
	o := sstable.SegmentOptions{Workers: d.o.Workers, Size: d.segmentSize, Cuts: d.cuts, Stop: stop}
	if o.Size <= 0 {
		o.Size = segmentSize
	}
	return o
}

// fail writes what was rendered before err and returns err (or the write
// error that came first).
func (d *Dumper) fail(err error) error {
	if ferr := d.Flush(); ferr != nil && d.err == ferr && !errors.Is(err, ferr) {
		return ferr
	}
	return err
}

// segmentWalk is All's share of Segmented.
type segmentWalk struct {
	d        *Dumper
	skip     func([]byte) bool
	progress func(int64)
	abort    chan struct{} // closed when the workers are to end
	stopOnce sync.Once
	free     chan []byte // full blocks written out, for reuse
}

// segmentOut is one segment's output (Segmented's R): the blocks its
// worker rendered, handed on to the calling goroutine as they fill.
type segmentOut struct {
	w      *segmentWalk
	r      *renderer // nil until the segment's first use
	blocks chan []byte
	start  int64
	serial bool // walked on the calling goroutine: rendered as Partition does
	// partitions rendered; whether the segment's first block is written
	partitions int
	written    bool
}

// reset readies o for a segment (on the goroutine that cuts them, before
// the segment's worker or Stream sees it).
func (w *segmentWalk) reset(o *segmentOut) {
	o.w, o.partitions, o.written = w, 0, false
	if o.blocks == nil {
		o.blocks = make(chan []byte, segmentBlocks)
	}
	if o.r != nil {
		o.r.buf = o.r.buf[:0]
	}
}

func (w *segmentWalk) stop() { w.stopOnce.Do(func() { close(w.abort) }) }

// begin starts a segment on its worker. A Serial one (the walk on the
// calling goroutine) renders with the dumper's own renderer, as
// Partition does; the others with one of their own, which hands full
// blocks to the segment's queue.
func (w *segmentWalk) begin(seg sstable.Segment, _ *rows.Decoder, o *segmentOut) error {
	o.start, o.serial = seg.Start, seg.Serial
	if !seg.Serial && o.r == nil {
		o.r = newRenderer(w.d.s, w.d.o, w.d.now, o)
	}
	return nil
}

func (w *segmentWalk) part(h *rows.PartitionHeader, dec *rows.Decoder, o *segmentOut) error {
	if w.skip != nil && w.skip(h.Key) {
		return nil // Segmented skips the rest
	}
	if o.serial {
		if w.progress != nil {
			w.progress(h.Offset)
		}
		return w.d.Partition(h, dec)
	}
	// Every segment's first partition is rendered with the comma; the
	// writer drops it when nothing came before.
	if err := o.r.partition(h, dec, false); err != nil {
		return err
	}
	o.partitions++
	return nil
}

// errAborted stops a worker whose output is no longer wanted.
var errAborted = errors.New("dump aborted")

// emit queues a full block for the calling goroutine (the renderer's
// sink, on the worker).
func (o *segmentOut) emit(buf []byte) ([]byte, error) {
	select {
	case <-o.w.abort:
		return buf[:0], errAborted
	default:
	}
	select {
	case o.blocks <- buf:
	case <-o.w.abort:
		return buf[:0], errAborted
	}
	select {
	case nb := <-o.w.free:
		return nb[:0], nil
	default:
		return make([]byte, 0, cap(buf)), nil
	}
}

// Stream writes the segment's blocks as its worker fills them, from the
// turn of the segment on (every segment before it written).
func (o *segmentOut) Stream(ended <-chan struct{}) error {
	for {
		select {
		case b := <-o.blocks:
			if err := o.write(b, true); err != nil {
				return err
			}
		case <-ended:
			// The worker is through: what it queued is all there is.
			for len(o.blocks) > 0 {
				if err := o.write(<-o.blocks, true); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// write writes a block of the segment's output, and keeps it for reuse
// when it is a queued block rather than the renderer's own buffer.
func (o *segmentOut) write(b []byte, reuse bool) error {
	d := o.w.d
	out := b
	if !o.written && d.count == 0 {
		out = b[d.r.l.partNext.n-d.r.l.partFirst.n:] // the document's first partition takes no comma
	}
	o.written = true
	if d.err == nil {
		_, d.err = d.w.Write(out)
	}
	if reuse {
		select {
		case o.w.free <- b[:0]:
		default:
		}
	}
	return d.err
}

// deliver writes what the segment's worker left in its buffer (its last
// block, short of full), once the blocks before it are written.
func (w *segmentWalk) deliver(o *segmentOut) error {
	if o.serial {
		return nil // written and counted as Partition does
	}
	if len(o.r.buf) > 0 {
		if err := o.write(o.r.buf, false); err != nil {
			return err
		}
		o.r.buf = o.r.buf[:0]
	}
	w.d.count += o.partitions
	if w.progress != nil {
		w.progress(o.start)
	}
	return nil
}
