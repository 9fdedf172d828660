package sstable

import (
	"errors"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// DefaultSegmentSize is how many uncompressed bytes of Data.db a segment
// holds at least (it ends at the first partition start after that): 64
// chunks of 16 KiB, so the chunk two segments share, decompressed by both,
// costs under 2%, and a table of a few hundred MB still makes hundreds of
// segments for the workers to share evenly.
const DefaultSegmentSize = 1 << 20

// SegmentOptions says how Segmented cuts Data.db and how many goroutines
// decode it.
type SegmentOptions struct {
	// Workers is how many goroutines decode at once; 0 means GOMAXPROCS.
	// With one, or without Index.db to cut at, or on a table of fewer
	// than two segments, everything runs on the calling goroutine.
	Workers int
	// Size is the uncompressed bytes per segment; 0 means
	// DefaultSegmentSize.
	Size int64
	// Cuts, when not nil, lists the segment boundaries instead of
	// Index.db (for tests: cuts need not be partition starts, see
	// Segmented). It sends increasing positions and stops when send
	// returns false.
	Cuts func(send func(Cut) bool)
	// Stop, when not nil, is called on the calling goroutine when the
	// workers are to end (the walk is through, failed, or goes on alone),
	// before it waits for them: a part that waits for something of a
	// later delivery (a caller streaming segments in order as they come)
	// must then return.
	Stop func()
}

// A Cut is a segment boundary: a Data.db position and, when it comes from
// Index.db, the Index.db position of the entry that points there (else
// -1).
type Cut struct{ Data, Index int64 }

// A Segment is what a worker walks: the partitions that start in
// [Start, End). Index is the Index.db position of the entry of the
// partition at Start, from the cut (0 for the first segment, Index.db's
// first entry; -1 when the cut does not say). Serial marks a part of a
// walk on the calling goroutine, which goes on from where the part
// before it stopped (Index is then -1).
type Segment struct {
	Start, End int64
	Index      int64
	Serial     bool
}

// ErrSerial, returned by deliver, refuses a segment: it is not delivered
// again, and the walk goes on alone on the calling goroutine from the
// segment's start (every part of it a Serial Segment), for a
// caller that finds the segment does not follow from the one before.
var ErrSerial = errors.New("sstable: go on with one decoder")

// A Streamer is a segment's result (Segmented's *R) that its worker hands
// on in pieces: Stream is called on the calling goroutine once every
// segment before this one is delivered (a Serial segment's is not: the
// calling goroutine walks it itself), before the segment is through;
// ended is closed when its worker is through with it. Stream takes what
// the worker hands on until then (the worker waits for it when it has
// handed on as much as it may keep), and deliver takes the rest. An error
// from Stream ends the walk as it is. A worker waiting to hand on a piece
// of a segment whose turn will not come (the walk failed, or goes on
// alone) must return when SegmentOptions.Stop is called.
type Streamer interface {
	Stream(ended <-chan struct{}) error
}

// Segmented walks Data.db partition by partition, as EachPartition does,
// on several goroutines: Data.db is cut into segments at partition starts
// Index.db lists, workers run part on every partition of a segment (with
// the header and a decoder positioned after it; whatever part leaves of
// the partition is skipped) collecting into the segment's *R, and the
// calling goroutine hands each segment's R to deliver in Data.db order.
// begin, when not nil, is called on the worker with each segment before
// its first partition (with the decoder it will walk it with), reset
// clears an R for reuse; R values are recycled once delivered.
//
// The result is that of one decoder walking Data.db from the start:
// every segment must start exactly where the one before it stopped (the
// first partition start at or after its end), so a cut that is not a
// partition start, an Index.db that lies, never changes what is
// delivered; when a segment does not start there, what follows is walked
// on the calling goroutine from where the data really is. An error from
// part or the decoder ends the walk: the partitions of its segment before
// it are delivered, then the error is returned, as a single decoder
// would return it; deliver's own error is returned as it is (but see
// ErrSerial).
//
// begin and part run on worker goroutines, at once for different
// segments: they may only write to their R (and read what does not
// change). deliver runs on the calling goroutine, and so do begin and
// part for a Serial segment.
//
// A caller that streams (whose R hands on pieces of a segment as its
// worker makes them, so that a partition of any size needs no more
// memory than a few pieces) makes *R a Streamer: its Stream is called on
// the calling goroutine when the segment's turn comes, while its worker
// may still walk it.
func Segmented[R any](s *SSTable, o SegmentOptions, reset func(r *R), begin func(seg Segment, dec *rows.Decoder, r *R) error,
	part func(h *rows.PartitionHeader, dec *rows.Decoder, r *R) error, deliver func(r *R) error) error {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := o.Size
	if size <= 0 {
		size = DefaultSegmentSize
	}
	cuts := o.Cuts
	if cuts == nil && s.indexFile != nil && !s.desc.Version.IsBTI() {
		cuts = func(send func(Cut) bool) {
			sc := index.NewScanner(s.indexFile, s.indexCodec, 0, false)
			c := Cutter{Size: size}
			for sc.Next() {
				if pos := sc.Entry().Position; c.At(pos) && !send(Cut{pos, sc.EntryPos()}) {
					return
				}
			}
		}
	}
	w := &segmentWalk[R]{s: s, size: size, reset: reset, begin: begin, part: part, deliver: deliver, stop: o.Stop}
	if workers < 2 || cuts == nil || s.data.Length() < 2*size {
		return w.serial(0)
	}
	return w.parallel(workers, cuts)
}

// A Cutter is where Segmented cuts Data.db, from the partition starts
// Index.db lists: at the first one at least Size bytes past the cut before
// it (past 0 for the first). A writer that sees the partition starts as it
// writes them can tell with one where a walk of what it wrote will cut
// (SegmentOptions{Size: Size}, Index.db's cuts).
type Cutter struct {
	Size int64
	last int64
}

// At reports whether a cut falls at pos, the next partition start.
func (c *Cutter) At(pos int64) bool {
	if pos-c.last < c.Size {
		return false
	}
	c.last = pos
	return true
}

type segmentWalk[R any] struct {
	s       *SSTable
	size    int64
	reset   func(*R)
	begin   func(Segment, *rows.Decoder, *R) error
	part    func(*rows.PartitionHeader, *rows.Decoder, *R) error
	deliver func(*R) error
	stop    func()
}

// segment is one worker's share: the partitions starting in [start, end).
type segment[R any] struct {
	start, end int64
	index      int64 // the cut's Index.db position (-1: none)
	r          *R
	done       chan struct{} // closed when the worker is through
	stop       int64         // where the worker's decoder stopped
	err        error
}

// walk runs begin, then part on the partitions of seg, and returns where
// the decoder stopped.
func (w *segmentWalk[R]) walk(dec *rows.Decoder, seg Segment, r *R) (int64, error) {
	if w.begin != nil {
		if err := w.begin(seg, dec, r); err != nil {
			return dec.Pos(), err
		}
	}
	var h rows.PartitionHeader
	for dec.Pos() < seg.End {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			break
		}
		if err != nil {
			return dec.Pos(), err
		}
		if err := w.part(&h, dec, r); err != nil {
			return dec.Pos(), err
		}
		if dec.InPartition() {
			if err := dec.SkipRest(); err != nil {
				return dec.Pos(), err
			}
		}
	}
	return dec.Pos(), nil
}

// serial walks from start (a partition start) to the end on the calling
// goroutine, delivering every segment's worth of partitions.
func (w *segmentWalk[R]) serial(start int64) error {
	dec := w.s.Decoder(start)
	var r R
	for {
		w.reset(&r)
		pos := dec.Pos()
		if pos >= w.s.data.Length() {
			return nil
		}
		stop, err := w.walk(dec, Segment{Start: pos, End: pos + w.size, Index: -1, Serial: true}, &r)
		if derr := w.deliver(&r); derr != nil {
			return derr
		}
		if err != nil {
			return err
		}
		if stop == pos {
			return nil // the decoder's clean end before the data's length
		}
	}
}

func (w *segmentWalk[R]) parallel(workers int, cuts func(func(Cut) bool)) error {
	done := make(chan struct{})
	work := make(chan *segment[R])
	order := make(chan *segment[R], 2*workers)
	free := make(chan *R, 3*workers)
	var wg sync.WaitGroup

	// The cutter makes the segments in Data.db order, for the calling
	// goroutine (order) and the workers (work).
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		start, startIndex := int64(0), int64(0)
		send := func(end Cut) bool {
			var r *R
			select {
			case r = <-free:
			default:
				r = new(R)
			}
			w.reset(r)
			seg := &segment[R]{start: start, end: end.Data, index: startIndex, r: r, done: make(chan struct{})}
			start, startIndex = end.Data, end.Index
			select {
			case order <- seg:
			case <-done:
				return false
			}
			select {
			case work <- seg:
				return true
			case <-done:
				// The calling goroutine may be waiting for it: end it.
				seg.err = errSegmentAborted
				close(seg.done)
				return false
			}
		}
		ok := true
		cuts(func(c Cut) bool {
			if c.Data <= start {
				return true // not increasing: ignore
			}
			ok = send(c)
			return ok
		})
		if ok {
			send(Cut{math.MaxInt64, -1})
		}
	}()

	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec *rows.Decoder // moved from segment to segment, its buffers kept
			for seg := range work {
				select {
				case <-done:
					seg.err = errSegmentAborted
				default:
					dec = w.s.DecoderAt(dec, seg.start)
					seg.stop, seg.err = w.walk(dec, Segment{Start: seg.start, End: seg.end, Index: seg.index}, seg.r)
				}
				close(seg.done)
			}
		}()
	}

	finish := func() {
		close(done)
		if w.stop != nil {
			w.stop()
		}
		// Let the cutter and the workers go: drain what is queued.
		go func() {
			for seg := range order {
				<-seg.done
			}
		}()
		wg.Wait()
	}

	next := int64(0)
	for seg := range order {
		if seg.start != next {
			// Index.db disagrees with Data.db: go on alone from where the
			// data really is.
			finish()
			return w.serial(next)
		}
		if st, ok := any(seg.r).(Streamer); ok {
			if err := st.Stream(seg.done); err != nil {
				finish()
				return err
			}
		}
		<-seg.done
		if err := w.deliver(seg.r); err == ErrSerial {
			finish()
			return w.serial(seg.start)
		} else if err != nil {
			finish()
			return err
		}
		if seg.err != nil {
			finish()
			return seg.err
		}
		next = seg.stop
		select {
		case free <- seg.r:
		default:
		}
	}
	finish()
	return nil
}

// errSegmentAborted marks a segment nobody waits for any more.
var errSegmentAborted = errors.New("segmented walk aborted")
