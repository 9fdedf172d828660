package undump

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// attemptState is one pass that writes: the sstable writer, and the input's
// positions being kept.
//
// Keeping positions: the input's "position" of a partition or row is
// where the written one must start. Between two such anchors lies a run
// of unfiltereds (a row; a row and the markers after it; a partition's
// last row and its end) whose written size must be the anchors' distance.
// What decides a run's size beyond what dump prints is a counter's
// context (only its total is printed): a run with counters is held until
// its end is known and its contexts are given the shards that make it
// the right size (fitCounters). Any other difference is the header's
// (EncodingStats minima, its columns) or an edited input: the first asks
// for another attempt with a header that fits the run (searchPlan), the
// second gives up keeping positions from there on (the sstable is the
// same whatever its positions).
type attemptState struct {
	in         Input
	o          Options
	plan       plan
	part       token.Partitioner
	order      []partRef
	prog       *progress
	res        *Result
	canRestart bool

	t   *table
	w   *writer.SSTableWriter
	enc *rows.Encoder // for sizes
	ctr counters

	fit      bool
	diverged string // why positions stopped being kept, and where

	// the partition being written
	inPartition bool
	partStart   int64 // written position of the partition
	prevStart   int64 // start of the previous unfiltered (or of the partition)
	needStatic  bool  // the header has static columns and the partition no static row yet
	run         []item

	partitions, rows, markers, cells int64
	sizeBuf                          []byte
}

// item is an unfiltered held in a run.
type item struct {
	u      *rows.Unfiltered
	offset int64 // its object's offset in the input (-1 for an implicit empty static row)
}

func (a *attemptState) write(dest string) (*plan, error) {
	var err error
	if a.t, err = newTable(a.o.Version, a.plan.header, a.in.Name); err != nil {
		return nil, err
	}
	a.enc = rows.NewEncoder(a.t.Schema())
	a.fit = a.plan.fit
	cfg := writer.Config{Version: a.o.Version, Generation: a.o.Generation, Header: a.plan.header, Schema: a.t.Schema(),
		Partitioner: a.o.Partitioner, Compression: a.o.Compression, BloomFilterFPChance: a.o.BloomFilterFPChance,
		ExpectedKeys: a.plan.sc.partitions, FS: a.o.FS}
	if a.w, err = writer.NewSSTableWriter(dest, cfg); err != nil {
		return nil, err
	}
	next, err := a.partitionsInOrder()
	a.prog.passDone()
	if err != nil || next != nil {
		a.w.Abort()
		return next, err
	}
	return nil, nil
}

// partitionsInOrder reads the input once, or partition by partition in
// the sorted order, and writes every partition.
func (a *attemptState) partitionsInOrder() (*plan, error) {
	if a.order == nil {
		rd := dump.NewReader(io.NewSectionReader(a.in.R, 0, a.in.Size), a.t)
		rd.JSONLines = a.o.JSONLines
		for {
			next, err := a.partition(rd, 0)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || next != nil {
				return next, err
			}
		}
	} else {
		for _, ref := range a.order {
			rd := dump.NewReader(io.NewSectionReader(a.in.R, ref.off, a.in.Size-ref.off), a.t)
			if _, err := a.partition(rd, ref.off); err != nil {
				return nil, err
			}
		}
	}
	if err := a.endPartition(-1); err != nil {
		return nil, err
	}
	return nil, nil
}

// partition writes the reader's next partition; base is the reader's
// offset in the input.
func (a *attemptState) partition(rd *dump.Reader, base int64) (*plan, error) {
	ph, err := rd.Next()
	if err != nil {
		return nil, err
	}
	a.prog.at(base + ph.Offset)
	if next, err := a.anchor(ph.Position, true); err != nil || next != nil {
		return next, err
	}
	if err := a.endPartition(ph.Position); err != nil {
		return nil, err
	}
	if a.fit && ph.Position != a.w.Pos() {
		a.stopFitting(fmt.Sprintf("from the partition at byte %d of the input (position %d, written at %d): the partition header differs in size (another sstable version?)", base+ph.Offset, ph.Position, a.w.Pos()))
	}
	a.partStart = a.w.Pos()
	if err := a.w.StartPartition(ph.Key, ph.Deletion); err != nil {
		return nil, dump.Fail(base+ph.Offset, "%v", err)
	}
	a.inPartition, a.prevStart = true, a.partStart
	a.needStatic = len(a.t.Schema().Static) > 0
	a.partitions++
	for {
		u, pos, err := rd.Unfiltered()
		if err != nil {
			return nil, err
		}
		if u == nil {
			break
		}
		off := base + rd.UnfilteredOffset()
		if u.Kind != rows.KindStaticRow && a.needStatic {
			a.hold(item{u: &rows.Unfiltered{Kind: rows.KindStaticRow}, offset: -1})
		}
		a.needStatic = false
		if pos >= 0 {
			if next, err := a.anchor(pos, false); err != nil || next != nil {
				return next, err
			}
			if a.fit && pos != a.w.Pos() {
				a.stopFitting(fmt.Sprintf("from the row at byte %d of the input (position %d, written at %d)", off, pos, a.w.Pos()))
			}
		}
		if err := a.hold(item{u: u.Clone(), offset: off}); err != nil {
			return nil, err
		}
	}
	if a.needStatic {
		a.hold(item{u: &rows.Unfiltered{Kind: rows.KindStaticRow}, offset: -1})
		a.needStatic = false
	}
	return nil, nil
}

func (a *attemptState) stopFitting(why string) {
	if a.fit {
		a.fit = false
		a.diverged = "not kept " + why
	}
}

// hold adds an unfiltered to the current run; without positions to keep
// it is written at once.
func (a *attemptState) hold(it item) error {
	a.run = append(a.run, it)
	if !a.fit {
		return a.flushRun(nil)
	}
	return nil
}

// anchor ends the current run at an input position: pos is where the next
// partition (partition) or row starts. The run must end there (a
// partition's end-of-partition byte comes before the next one).
func (a *attemptState) anchor(pos int64, partition bool) (*plan, error) {
	if len(a.run) == 0 {
		return nil, nil
	}
	if !a.fit || pos < 0 {
		return nil, a.flushRun(nil)
	}
	end := pos
	if partition {
		end-- // the end-of-partition byte
	}
	want := end - a.w.Pos()
	layout, ok := a.fitRun(a.enc, want)
	if ok {
		return nil, a.flushRun(layout)
	}
	if a.canRestart {
		if next := a.searchPlan(want); next != nil {
			return next, nil
		}
	}
	a.stopFitting(fmt.Sprintf("from the unfiltered at byte %d of the input: it does not take the %d bytes its position and the next give it (an edited input?)", a.run[0].offset, want))
	return nil, a.flushRun(nil)
}

// flushRun writes the run, its counters with the layouts given (nil:
// one global shard each).
func (a *attemptState) flushRun(layouts []counterLayout) error {
	k := 0
	for _, it := range a.run {
		u, next, err := a.ctr.contexts(it.u, a.t, layouts, k)
		if err != nil {
			return dump.Fail(max(it.offset, 0), "%v", err)
		}
		k = next
		switch u.Kind {
		case rows.KindStaticRow:
			err = a.w.AddStatic(u)
			a.rows++
		case rows.KindMarker:
			a.prevStart = a.w.Pos()
			err = a.w.Add(u)
			a.markers++
		default:
			a.prevStart = a.w.Pos()
			err = a.w.Add(u)
			a.rows++
		}
		if err != nil {
			return dump.Fail(max(it.offset, 0), "%v", err)
		}
		a.cells += int64(len(u.Cells))
	}
	a.run = a.run[:0]
	return nil
}

// endPartition closes the open partition, writing what it holds.
func (a *attemptState) endPartition(next int64) error {
	if !a.inPartition {
		return nil
	}
	if len(a.run) > 0 {
		if _, err := a.anchor(next, true); err != nil {
			return err
		}
		if len(a.run) > 0 { // a restart was asked for at the last partition: write as is
			if err := a.flushRun(nil); err != nil {
				return err
			}
		}
	}
	a.inPartition = false
	return a.w.EndPartition()
}

// runSize is the written size of the run with an encoder and counter
// layouts, from the writer's current position.
func (a *attemptState) runSize(enc *rows.Encoder, layouts []counterLayout) (int64, error) {
	pos, prevStart := a.w.Pos(), a.prevStart
	k := 0
	for _, it := range a.run {
		u, next, err := a.ctr.contexts(it.u, a.t, layouts, k)
		if err != nil {
			return 0, err
		}
		k = next
		var prev uint64
		if u.Kind != rows.KindStaticRow {
			prev = uint64(pos - prevStart)
			prevStart = pos
		}
		if a.sizeBuf, err = enc.AppendUnfiltered(a.sizeBuf[:0], u, prev); err != nil {
			return 0, err
		}
		pos += int64(len(a.sizeBuf))
	}
	return pos - a.w.Pos(), nil
}
