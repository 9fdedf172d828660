package dump

import (
	"errors"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/index"
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
// With more than one worker (Options.Workers, default GOMAXPROCS),
// workers render consecutive segments of Data.db at once, cut at
// partition starts listed in Index.db, and one writer puts their output
// out in order, so memory stays bounded by the workers and their queues,
// whatever the partition sizes. Each segment must start exactly where the
// one before it ended; when Index.db says otherwise the dump goes on
// alone from where the last segment really ended, so the output is the
// same as a single decoder's whatever the index holds.
func (d *Dumper) All(skip func(key []byte) bool, progress func(off int64)) error {
	workers := d.o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	segSize := d.segmentSize
	if segSize <= 0 {
		segSize = segmentSize
	}
	if d.err != nil {
		return d.err
	}
	if workers < 2 || d.s.Index() == nil || d.s.Data().Length() < 2*segSize {
		return d.serial(0, skip, progress)
	}
	// What Begin (or earlier partitions) left in the buffer goes first.
	if err := d.Flush(); err != nil {
		return err
	}
	cuts := d.cuts
	if cuts == nil {
		cuts = indexCuts(d.s, segSize)
	}
	return d.parallel(workers, cuts, skip, progress)
}

// serial dumps the partitions from Data.db offset start (a partition
// start) to the end with one decoder, as EachPartition does.
func (d *Dumper) serial(start int64, skip func([]byte) bool, progress func(int64)) error {
	dec := d.s.Decoder(start)
	var h rows.PartitionHeader
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			return d.Flush()
		}
		if err != nil {
			return d.fail(err)
		}
		if skip != nil && skip(h.Key) {
			if err := dec.SkipRest(); err != nil {
				return d.fail(err)
			}
			continue
		}
		if progress != nil {
			progress(h.Offset)
		}
		if err := d.Partition(&h, dec); err != nil {
			return d.fail(err)
		}
	}
}

// fail writes what was rendered before err and returns err (or the write
// error that came first).
func (d *Dumper) fail(err error) error {
	if ferr := d.Flush(); ferr != nil && d.err == ferr && !errors.Is(err, ferr) {
		return ferr
	}
	return err
}

// segment is one worker's share: the partitions starting in [start, end).
type segment struct {
	start, end int64
	blocks     chan []byte // rendered output in order, closed when done
	// Set before blocks is closed:
	stop       int64 // where the worker's decoder stopped
	partitions int
	err        error
}

// cutFunc lists segment boundaries (partition starts, increasing) to
// send, stopping early when send returns false.
type cutFunc func(send func(pos int64) bool)

// indexCuts cuts Data.db at the first partition start of Index.db past
// every segSize bytes. An unreadable Index.db ends the cuts: the last
// segment then runs to the end of Data.db.
func indexCuts(s *sstable.SSTable, segSize int64) cutFunc {
	return func(send func(int64) bool) {
		sc := index.NewScanner(s.Index(), s.IndexCodec(), 0, false)
		last := int64(0)
		for sc.Next() {
			pos := sc.Entry().Position
			if pos-last >= segSize {
				if !send(pos) {
					return
				}
				last = pos
			}
		}
	}
}

// errAborted stops a worker whose output is no longer wanted.
var errAborted = errors.New("dump aborted")

// blockSink sends a worker's full buffers to its segment's queue.
type blockSink struct {
	seg  *segment
	done <-chan struct{}
	free chan []byte
}

func (b *blockSink) emit(buf []byte) ([]byte, error) {
	select {
	case <-b.done:
		return buf[:0], errAborted
	default:
	}
	select {
	case b.seg.blocks <- buf:
	case <-b.done:
		return buf[:0], errAborted
	}
	select {
	case nb := <-b.free:
		return nb[:0], nil
	default:
		return make([]byte, 0, cap(buf)), nil
	}
}

func (d *Dumper) parallel(workers int, cuts cutFunc, skip func([]byte) bool, progress func(int64)) error {
	done := make(chan struct{})
	work := make(chan *segment)
	order := make(chan *segment, 2*workers)
	free := make(chan []byte, workers*(segmentBlocks+2))
	var wg sync.WaitGroup

	// The cutter makes the segments, in Data.db order, for the writer
	// (order) and the workers (work).
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		start := int64(0)
		send := func(end int64) bool {
			select {
			case <-done:
				return false
			default:
			}
			seg := &segment{start: start, end: end, blocks: make(chan []byte, segmentBlocks)}
			start = end
			select {
			case order <- seg:
			case <-done:
				return false
			}
			select {
			case work <- seg:
				return true
			case <-done:
				// The writer may be waiting on this segment: end it.
				seg.err = errAborted
				close(seg.blocks)
				return false
			}
		}
		ok := true
		cuts(func(pos int64) bool {
			if pos <= start {
				return true // not increasing: ignore
			}
			ok = send(pos)
			return ok
		})
		if ok {
			send(math.MaxInt64)
		}
	}()

	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sink := &blockSink{done: done, free: free}
			r := newRenderer(d.s, d.o, d.now, sink)
			for seg := range work {
				sink.seg = seg
				select {
				case <-done:
					seg.err = errAborted
				default:
					d.renderSegment(r, seg, skip)
				}
				if len(r.buf) > 0 && seg.err != errAborted {
					select {
					case seg.blocks <- r.buf:
						r.buf = make([]byte, 0, cap(r.buf))
					case <-done:
						r.buf = r.buf[:0]
					}
				}
				close(seg.blocks)
			}
		}()
	}

	finish := func(err error) error {
		close(done)
		// Let blocked senders go: drain what is queued.
		go func() {
			for seg := range order {
				for range seg.blocks {
				}
			}
		}()
		wg.Wait()
		return err
	}

	// The writer: segments in order, each checked to start where the one
	// before it stopped.
	next := int64(0)
	comma := d.r.l.partNext.n - d.r.l.partFirst.n // the separator's extra bytes
	for seg := range order {
		if seg.start != next {
			// Index.db disagrees with Data.db: go on alone from where the
			// data really is.
			_ = finish(nil)
			return d.serial(next, skip, progress)
		}
		if progress != nil {
			progress(seg.start)
		}
		firstBlock := true
		for b := range seg.blocks {
			if firstBlock && d.count == 0 {
				b = b[comma:] // the document's first partition takes no comma
			}
			firstBlock = false
			if d.err == nil {
				_, d.err = d.w.Write(b)
			}
			select {
			case free <- b[:0]:
			default:
			}
			if d.err != nil {
				return finish(d.err)
			}
		}
		d.count += seg.partitions
		if seg.err != nil {
			return finish(seg.err)
		}
		next = seg.stop
	}
	return finish(d.Flush())
}

// renderSegment renders the partitions of seg with r, as serial would.
func (d *Dumper) renderSegment(r *renderer, seg *segment, skip func([]byte) bool) {
	dec := d.s.Decoder(seg.start)
	var h rows.PartitionHeader
	defer func() { seg.stop = dec.Pos() }()
	for dec.Pos() < seg.end {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			return
		}
		if err != nil {
			seg.err = err
			return
		}
		if skip != nil && skip(h.Key) {
			if err := dec.SkipRest(); err != nil {
				seg.err = err
				return
			}
			continue
		}
		// Every segment's first partition is rendered with the comma; the
		// writer drops it when nothing came before.
		if err := r.partition(&h, dec, false); err != nil {
			if errors.Is(err, errAborted) {
				seg.err = errAborted
			} else {
				seg.err = err
			}
			return
		}
		seg.partitions++
	}
}
