package export

import (
	"runtime"
	"sync"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// An sstable's records are filled on every core: sstable.Segmented cuts
// Data.db into segments at partition starts (Index.db's), and each
// segment is filled by a tableWriter of its own (segmentWriter), into
// batches of its own. The batches go to the encoder in Data.db order:
// the segment whose turn it is (every segment before it delivered) hands
// its batches straight on; the others keep theirs until their turn and,
// their few batches full, wait for it. A segment's end ends its last
// batch, on one core as on many (Segmented's walk on one goroutine cuts
// the same segments), so the files are the same bytes whatever the
// cores. A merged source is walked on one goroutine (table.go).

// segmentPool is how many batches of each file a segment fills before it
// waits for its turn (or for the encoder): the segment whose turn it is
// has them queued in the encoder while it fills the next.
const segmentPool = 3

// segmentBytes is the Data.db bytes per segment: 4 MiB rather than
// Segmented's 1, as each segment ends a batch of each file (a few hundred
// partitions' rows of the partitions dataset, whose columns cost the
// encoder per batch). segmentCuts, when not nil, is where to cut instead
// of Index.db's entries. Tests set both.
var (
	segmentBytes int64 = 4 << 20
	segmentCuts  func(send func(sstable.Cut) bool)
)

// segmentWorkers is how many goroutines fill records: one per core, as
// the dump walks, beside the encoder's (on two cores, six rounds in turn
// against one walker: 1.92–3.12x the dump, median 2.25x, against
// 2.11–3.27x, median 2.38x), and at most maxSegmentWorkers: the segments
// in flight hold batches of their own, so memory grows with the walkers
// (peak RSS exporting the 0.43 GB demo table: 247 MB with GOMAXPROCS=2,
// 279 MB with 8, 317 MB with 16).
func segmentWorkers() int { return min(runtime.GOMAXPROCS(0), maxSegmentWorkers) }

const maxSegmentWorkers = 8

// segmentWriter is one segment's share of the walk (Segmented's R).
type segmentWriter struct {
	w           *tableWriter
	start, stop int64 // where its partitions start, and where they end
	inTurn      bool
	pending     [2][]*batch // by file: full batches kept until its turn
}

// sequencer hands the segments' batches to the encoders in Data.db order.
type sequencer struct {
	mu      sync.Mutex
	base    *tableWriter
	files   [2]*parquetFile // partitions, cells (nil when not selected)
	next    int64           // where the segment whose turn is next starts
	current *segmentWriter  // the segment whose turn it is, once it has begun
	waiting map[int64]*segmentWriter
	abandon chan struct{}
	stopped bool
}

// segmented exports s's partitions and cells on every core.
func (e *Exporter) segmented(s *sstable.SSTable, w *tableWriter, files [2]*parquetFile, total int64) error {
	q := &sequencer{base: w, files: files, waiting: map[int64]*segmentWriter{}, abandon: make(chan struct{})}
	return sstable.Segmented(s, sstable.SegmentOptions{Workers: segmentWorkers(), Size: segmentBytes, Cuts: segmentCuts, Stop: q.stop},
		func(*segmentWriter) {},
		q.begin,
		func(h *rows.PartitionHeader, dec *rows.Decoder, r *segmentWriter) error {
			if err := r.w.partition(h, dec); err != nil {
				return err
			}
			r.stop = dec.Pos() // partition reads the partition to its end
			return nil
		},
		func(r *segmentWriter) error {
			if err := q.deliver(r); err != nil {
				return err
			}
			w.totals.add(&r.w.totals)
			if e.o.Progress != nil {
				e.o.Progress(r.stop, total)
			}
			return nil
		})
}

// begin starts segment seg: its writer (made on the segment's first use
// of r), its turn or its wait, and an empty batch of each file.
func (q *sequencer) begin(seg sstable.Segment, _ *rows.Decoder, r *segmentWriter) error {
	if r.w == nil {
		// A segment of the walk on the calling goroutine never waits for
		// its turn (it is always its turn), so nothing abandons it.
		var abandon <-chan struct{}
		if !seg.Serial {
			abandon = q.abandon
		}
		r.w = q.base.forSegment()
		for i, pf := range q.files {
			if pf == nil {
				continue
			}
			f, err := pf.newFiller(segmentPool, func(b *batch) { q.hand(r, i, b) }, abandon)
			if err != nil {
				return err
			}
			if i == 0 {
				r.w.parts = f
			} else {
				r.w.cells = f
			}
		}
	}
	r.w.totals = tableTotals{}
	r.start, r.stop = seg.Start, seg.Start
	q.mu.Lock()
	for i := range r.pending {
		r.pending[i] = r.pending[i][:0]
	}
	if seg.Serial {
		// The walk goes on alone from here, from where it says the data
		// is: whatever segment was to come next will not.
		q.next, q.current = seg.Start, nil
	}
	r.inTurn = seg.Start == q.next && q.current == nil
	if r.inTurn {
		q.current = r
	} else {
		q.waiting[seg.Start] = r
	}
	q.mu.Unlock()
	for _, f := range []*filler{r.w.parts, r.w.cells} {
		if f != nil && f.cur == nil {
			if err := f.take(); err != nil {
				return err
			}
		}
	}
	return nil
}

// hand takes a full batch of file i from segment r.
func (q *sequencer) hand(r *segmentWriter, i int, b *batch) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.inTurn {
		q.files[i].enc.add(b)
	} else {
		r.pending[i] = append(r.pending[i], b)
	}
}

// deliver ends segment r, which Segmented delivers once every segment
// before it is: its last batches go to the encoders, and the turn to the
// segment that starts where it stops.
func (q *sequencer) deliver(r *segmentWriter) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !r.inTurn {
		// Not where the segment before it stopped, by this count (which
		// is Segmented's): refuse it, and Segmented goes on alone from
		// its start.
		delete(q.waiting, r.start)
		return sstable.ErrSerial
	}
	for i, f := range []*filler{r.w.parts, r.w.cells} {
		if f == nil {
			continue
		}
		if b := f.detach(); b != nil {
			q.files[i].enc.add(b)
		}
	}
	r.inTurn = false
	q.current, q.next = nil, r.stop
	if nx := q.waiting[q.next]; nx != nil {
		delete(q.waiting, q.next)
		for i, bs := range nx.pending {
			for _, b := range bs {
				q.files[i].enc.add(b)
			}
			nx.pending[i] = nx.pending[i][:0]
		}
		nx.inTurn, q.current = true, nx
	}
	return nil
}

// stop ends the segments still waiting for their turn, which will not
// come: Segmented is through, has failed, or goes on alone.
func (q *sequencer) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.stopped = true
		close(q.abandon)
	}
	clear(q.waiting)
}
