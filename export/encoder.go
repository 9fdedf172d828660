package export

import (
	"fmt"
	"runtime"
	"sync"
)

// The encoder writes the full batches into the file's row groups. Each
// column of a row group has a writer of its own (its encoder, page
// buffer and chunk metadata), so the columns are written independently:
// each goes through the batches in order, on whichever core is free,
// rather than all of a batch's columns before any of the next one's
// (which, the columns' costs being uneven, left a core idle at the end
// of every batch). A batch is freed once every column has written it.
//
// The row group is the one barrier: it ends after the batch that brings
// it to rowGroupRecords records, or after the batch that follows the one
// that brought its pages to rowGroupBytes or a shared column's
// dictionary to sharedDictBytes. The first is known as soon as the batch
// is placed in its row group; the others only once every column has
// written the batch, hence a batch later, which lets a column run a
// batch ahead of the slowest one. Either way the boundaries depend on the
// records alone, not on which core took which column when: the file is
// the same bytes whatever the cores.
type encoder struct {
	pf *parquetFile
	mu sync.Mutex
	// wake is signalled whenever a column may have become writable, or
	// the encoder may be done.
	wake  sync.Cond
	queue []*batch // handed on and not yet freed, in order
	next  []int64  // each column's next batch, by seq
	busy  []bool   // each column is being written
	seq   int64    // the next batch's seq
	last  placing  // the last batch freed (before any, one that ends a row group)
	group int64    // the row group the writer holds (or last held)
	open  bool     // the writer holds row group group
	// closing: a worker is ending row group group; the next one waits.
	closing  bool
	stopping bool // no more batches will come
	err      error
	workers  sync.WaitGroup
	limits   groupLimits
}

// groupLimits are the bounds of a row group: rowGroupRecords,
// rowGroupBytes and sharedDictBytes, which tests lower to have a small
// table written in many row groups.
type groupLimits struct {
	records   int
	bytes     int64
	dictBytes int
}

var rowGroupLimits = groupLimits{rowGroupRecords, rowGroupBytes, sharedDictBytes}

// placing is a batch's place in the row groups.
type placing struct {
	group   int64 // the row group it is in, -1 before it is placed
	pos     int   // its place in the row group, from 0
	records int   // the row group's records up to and including it
	// ends: whether the row group ends after it (endsUnknown until
	// known).
	ends int8
	// done: every column has written it; full: after it the row group
	// had rowGroupBytes of pages or a full shared dictionary.
	done, full bool
}

const (
	endsUnknown int8 = iota
	endsNo
	endsYes
)

// encoderState is what a batch carries through the encoder.
type encoderState struct {
	seq        int64
	at         placing
	left       int   // columns still to write it
	compressed int64 // the row group's compressed pages after it, summed as its columns write it
	dictFull   bool  // a shared column's dictionary is full after it
}

func newEncoder(pf *parquetFile) *encoder {
	e := &encoder{pf: pf, next: make([]int64, len(pf.names)), busy: make([]bool, len(pf.names)),
		last: placing{group: -1, ends: endsYes, done: true}, group: -1, limits: rowGroupLimits}
	e.wake.L = &e.mu
	for range min(runtime.GOMAXPROCS(0), len(pf.names)) {
		e.workers.Add(1)
		go e.work()
	}
	return e
}

// add queues a full batch.
func (e *encoder) add(b *batch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b.enc = encoderState{seq: e.seq, at: placing{group: -1}, left: len(b.cols)}
	e.seq++
	e.pf.rows += int64(b.n)
	e.queue = append(e.queue, b)
	e.place()
	e.wake.Broadcast()
}

// failure is the encoder's first error.
func (e *encoder) failure() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// stop waits for the queued batches to be written and the workers to
// end, and returns the first error.
func (e *encoder) stop() error {
	e.mu.Lock()
	e.stopping = true
	e.wake.Broadcast()
	e.mu.Unlock()
	e.workers.Wait()
	return e.err
}

// place works out the row group of each queued batch and whether the row
// group ends after it, as far as what is written so far tells.
func (e *encoder) place() {
	prev := e.last
	for _, b := range e.queue {
		s := &b.enc
		if s.at.group < 0 {
			switch prev.ends {
			case endsUnknown:
				return
			case endsYes:
				s.at.group, s.at.pos, s.at.records = prev.group+1, 0, b.n
			default:
				s.at.group, s.at.pos, s.at.records = prev.group, prev.pos+1, prev.records+b.n
			}
		}
		if s.at.ends == endsUnknown {
			switch {
			case s.at.records >= e.limits.records:
				s.at.ends = endsYes
			case s.at.pos == 0:
				s.at.ends = endsNo
			case !prev.done:
				return
			case prev.full:
				s.at.ends = endsYes
			default:
				s.at.ends = endsNo
			}
		}
		prev = s.at
	}
}

// pick returns a column that may be written now and its batch: the
// oldest batch's first, which frees batches soonest. A batch may be
// written once placed, into its row group once the writer holds it (the
// first column of a row group's first batch appends the row group).
func (e *encoder) pick() (*batch, int, error) {
	for _, b := range e.queue {
		s := &b.enc
		if e.err == nil {
			if s.at.group < 0 {
				return nil, 0, nil
			}
			if s.at.group != e.group || !e.open {
				if s.at.group != e.group+1 || e.open || e.closing {
					return nil, 0, nil
				}
				rg, err := e.pf.pw.appendRowGroup()
				if err != nil {
					return nil, 0, err
				}
				e.pf.rg, e.group, e.open = rg, s.at.group, true
			}
		}
		for i, n := range e.next {
			if n == s.seq && !e.busy[i] {
				return b, i, nil
			}
		}
	}
	return nil, 0, nil
}

// work writes columns of batches until the encoder stops.
func (e *encoder) work() {
	defer e.workers.Done()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		b, i, err := e.pick()
		if err != nil {
			e.fail(err)
			continue
		}
		if b == nil {
			if e.stopping && len(e.queue) == 0 {
				return
			}
			e.wake.Wait()
			continue
		}
		e.busy[i] = true
		failed := e.err != nil
		e.mu.Unlock()
		var compressed int64
		var dict int
		if !failed {
			compressed, dict, err = e.pf.writeColumnOf(b, i)
		}
		e.mu.Lock()
		e.busy[i] = false
		e.next[i]++
		if err != nil {
			e.fail(fmt.Errorf("%s: column %s: %w", e.pf.final, e.pf.names[i], err))
		}
		s := &b.enc
		s.compressed += compressed
		s.dictFull = s.dictFull || dict >= e.limits.dictBytes
		if s.left--; s.left == 0 {
			e.done(b)
		}
		e.wake.Broadcast()
	}
}

// fail records the first error: the batches still queued are then only
// freed.
func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
		e.pf.failed.Store(true)
	}
	e.wake.Broadcast()
}

// done frees batch b, which every column has written, and ends its row
// group if it is the group's last batch. Called with mu held, which it
// lets go while the row group is written.
func (e *encoder) done(b *batch) {
	s := &b.enc
	s.at.done = true
	s.at.full = s.compressed >= e.limits.bytes || s.dictFull
	e.place()
	e.queue = e.queue[1:]
	e.last = s.at
	b.home <- b
	if s.at.ends != endsYes || e.err != nil {
		return
	}
	e.open, e.closing = false, true
	e.mu.Unlock()
	err := e.pf.endRowGroup()
	e.mu.Lock()
	e.closing = false
	if err != nil {
		e.fail(err)
	}
}
