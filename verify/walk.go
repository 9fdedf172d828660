package verify

import (
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// The structure check walks Data.db once, partition by partition, beside
// Index.db. It runs on every core (sstable.Segmented): a walker per
// segment checks each partition against its Index.db entry and decodes
// its rows, recording its problems and what only the whole walk can judge
// (a segment's first key against the key before it, Summary.db's samples,
// the rebuilt filter, the partition count) as events, which the calling
// goroutine replays in Data.db order. The report is the one a single
// walker gives: the same problems in the same order, because a segment is
// taken only when it begins where the one before ended, in Data.db and in
// Index.db (its walker started at the right Index.db entry and the index
// walk before it had not ended); otherwise the rest is walked on the
// calling goroutine, which goes on from there with its own walker and
// applies everything as it goes.

// structure is the walk's state on the calling goroutine, and what every
// walker reads.
type structure struct {
	s        *sstable.SSTable
	r        *Report
	skimRows bool
	progress func(done, total int64)
	follow   Follower // nil: none

	dataPath, indexPath, filterPath string
	hasIndex                        bool // big format with Index.db: entries are checked
	bf                              *filter.BloomFilter
	bc                              *btiCheck
	sc                              *summaryCheck
	stc                             *statsCheck
	fc                              *filterCheck
	digest                          *rows.Digest // Written.Content; nil: not asked

	// Where the walk stands, in Data.db order.
	prevKey   []byte
	havePrev  bool
	idxNext   int64 // the Index.db position of the next partition's entry
	idxActive bool  // false once Index.db ended or failed (or when unchecked)
	serial    *walker
}

// walker checks partitions in order: one per segment on a worker, or the
// calling goroutine's.
type walker struct {
	st *structure
	// r takes the problems: the report itself, or a segment's list.
	r *Report
	// seg is the segment being walked, whose events the calling
	// goroutine replays; nil for the calling goroutine's walker, which
	// applies them itself.
	seg                  *segmentResult
	idx                  *index.Scanner // nil once Index.db ended or failed
	rawEntry, canonEntry []byte
	prevKey              []byte
	havePrev             bool
	prevToken            token.Token // prevKey's, taken once
	stc                  *statsCheck
	follow               SegmentReader // nil: none
	// dg takes the digest of the partitions walked (the structure's, or
	// the segment's); nil when none is asked. The decoder's tap feeds it
	// the rows the walk decodes.
	dg *rows.Digest
}

// digesting points the walker and its decoder at dg (nil: none).
func (w *walker) digesting(dg *rows.Digest, dec *rows.Decoder) {
	w.dg = dg
	if dg == nil {
		dec.SetTap(nil)
		return
	}
	dec.SetTap(dg.Unfiltered)
}

// segmentResult is what a worker found in one segment.
type segmentResult struct {
	w        *walker // the walker filling it: &own, or the structure's
	own      walker
	problems Report // raw: every problem in order, repeats included
	events   []walkEvent
	keys     []byte // the events' keys, one after another
	stats    *statsCheck
	digest   rows.Digest // taken into the structure's when delivered
	idxStart int64       // where its Index.db walk began (-1: none)
	// overflow: more problems than a segment carries; it is walked again
	// on the calling goroutine, which keeps only what the report takes.
	overflow   bool
	lastOffset int64
}

// maxSegmentProblems bounds what a segment carries for the calling
// goroutine to replay (a badly damaged table makes a problem per cell).
// A variable for the tests.
var maxSegmentProblems = 1000

type walkEventKind uint8

const (
	// evPartition: a partition was read (counted, its key in the rebuilt
	// filter; it is the previous key of the next).
	evPartition walkEventKind = iota
	// evFirstKey: the segment's first partition, whose key the calling
	// goroutine compares with the key before it.
	evFirstKey
	// evEntry: an Index.db entry, for the Summary.db check.
	evEntry
)

// walkEvent is one event, after the segment's first problems problems.
type walkEvent struct {
	kind     walkEventKind
	problems int
	pos      int64 // evFirstKey: the partition's offset; evEntry: the entry's Index.db position
	key      [2]int
}

func (g *segmentResult) reset() {
	g.problems.raw = true
	g.problems.Problems = g.problems.Problems[:0]
	g.events, g.keys = g.events[:0], g.keys[:0]
	g.overflow = false
}

func (g *segmentResult) event(kind walkEventKind, pos int64, key []byte) {
	g.events = append(g.events, walkEvent{kind: kind, problems: len(g.problems.Problems), pos: pos, key: [2]int{len(g.keys), len(g.keys) + len(key)}})
	g.keys = append(g.keys, key...)
}

// segmentOptions is how the walk is cut and spread: the defaults
// (GOMAXPROCS workers); tests cut small tables finely.
var segmentOptions sstable.SegmentOptions

// errStop ends a walk whose decoding failed (the failure is a problem).
var errStop = errors.New("verify: the walk stopped")

// checkStructure decodes Data.db once while walking Index.db beside it.
func checkStructure(s *sstable.SSTable, r *Report, skimRows bool, progress func(done, total int64), follow Follower, written *Written) {
	st := &structure{s: s, r: r, skimRows: skimRows, progress: progress, follow: follow,
		dataPath: s.Path(format.ComponentData), indexPath: s.Path(format.ComponentIndex), filterPath: s.Path(format.ComponentFilter)}
	var keys *filter.BloomFilter
	if written != nil {
		keys, st.digest = written.Keys, written.Content
		if st.digest != nil {
			st.digest.Reset()
		}
	}
	switch {
	case s.Version().IsBTI():
		st.bc = newBTICheck(s, r)
	case s.Index() != nil:
		st.hasIndex, st.idxActive = true, true
		r.Checks = append(r.Checks, "Index.db positions, keys, order, and promoted index blocks against the rows")
	default:
		r.add(Problem{File: st.indexPath, Component: "Index.db", Offset: -1, Message: "missing"})
	}
	if s.HasComponent(format.ComponentFilter) {
		var err error
		if st.bf, err = filter.ReadFile(st.filterPath, s.Version().HasOldBloomFilterFormat); err != nil {
			r.addErr(st.filterPath, "Filter.db", err)
			st.bf = nil
		} else {
			r.Checks = append(r.Checks, "Filter.db holds every key")
		}
	}
	st.sc = newSummaryCheck(s, r)
	st.stc = newStatsCheck(s, r, skimRows)
	st.fc = newFilterCheck(s, r, st.bf, keys)
	if h := s.Stats().Header; h != nil {
		for _, msg := range h.CastMinima() {
			r.add(Problem{File: s.Path(format.ComponentStatistics), Component: "Statistics.db", Offset: -1, Message: msg})
		}
	}
	o := segmentOptions
	if st.bc != nil {
		o.Workers = 1 // the trie walks follow Data.db from the start
	}
	err := sstable.Segmented(s, o, (*segmentResult).reset, st.begin, st.part, st.deliver)
	if err != nil {
		// The keys read before the failure are checked against Filter.db too.
		st.fc.keysMissing(s)
		if err != errStop {
			// The decoder's own failure at a partition header.
			r.addErr(st.dataPath, "Data.db", err)
		}
		return
	}
	if st.hasIndex {
		idx := st.indexAfter()
		if idx != nil {
			if idx.Next() {
				r.add(Problem{File: st.indexPath, Component: "Index.db", Offset: idx.EntryPos(),
					Message: "entry for a partition that Data.db does not hold"})
			} else if err := idx.Err(); err != nil {
				// Bytes after the last entry that do not make an entry.
				r.addErr(st.indexPath, "Index.db", err)
			}
		}
	}
	if st.bc != nil {
		st.bc.finish(r.Partitions)
	}
	st.sc.finish()
	st.stc.finish()
	st.fc.keysMissing(s)
	st.fc.finish(s, r.Partitions)
	checkFilterKind(s, r, st.bf)
}

// indexAfter is Index.db's scanner after the last partition's entry, nil
// when the index walk ended before.
func (st *structure) indexAfter() *index.Scanner {
	if st.serial != nil {
		return st.serial.idx
	}
	if !st.idxActive {
		return nil
	}
	return index.NewScanner(st.s.Index(), st.s.IndexCodec(), st.idxNext, true)
}

// begin readies the walker of a segment.
func (st *structure) begin(seg sstable.Segment, dec *rows.Decoder, g *segmentResult) error {
	dec.CollectTimeAnomalies()
	if seg.Serial {
		if st.serial == nil {
			w := &walker{st: st, r: st.r, prevKey: append([]byte(nil), st.prevKey...), havePrev: st.havePrev, stc: st.stc}
			w.prevToken = st.s.Partitioner().Token(w.prevKey)
			if st.idxActive {
				w.idx = index.NewScanner(st.s.Index(), st.s.IndexCodec(), st.idxNext, true)
			}
			st.serial = w
		}
		g.w = st.serial
		if st.follow != nil {
			g.w.follow = st.follow.Segment(seg)
		}
		g.w.digesting(st.digest, dec)
		return nil
	}
	w := &g.own
	w.st, w.r, w.seg, w.havePrev = st, &g.problems, g, false
	w.prevKey = w.prevKey[:0]
	if g.stats == nil {
		g.stats = st.stc.fork()
	} else {
		g.stats.reset()
	}
	w.stc = g.stats
	w.idx, g.idxStart = nil, -1
	if st.hasIndex && seg.Index >= 0 {
		w.idx, g.idxStart = index.NewScanner(st.s.Index(), st.s.IndexCodec(), seg.Index, true), seg.Index
	}
	if st.follow != nil {
		w.follow = st.follow.Segment(seg)
	}
	g.digest.Reset()
	if st.digest != nil {
		w.digesting(&g.digest, dec)
	} else {
		w.digesting(nil, dec)
	}
	g.w = w
	return nil
}

func (st *structure) part(h *rows.PartitionHeader, dec *rows.Decoder, g *segmentResult) error {
	if err := g.w.partition(h, dec); err != nil {
		return err
	}
	g.lastOffset = h.Offset
	if g.w.seg != nil && len(g.problems.Problems) > maxSegmentProblems {
		g.overflow = true
		return errStop
	}
	return nil
}

// deliver takes a segment in Data.db order, or refuses it (ErrSerial)
// when it does not follow from the one before.
func (st *structure) deliver(g *segmentResult) error {
	if g.w == st.serial {
		if st.follow != nil {
			st.follow.Take(g.w.follow)
		}
		if st.progress != nil {
			st.progress(g.lastOffset, st.s.Data().Length())
		}
		return nil // applied as it was walked
	}
	if g.overflow || st.hasIndex && g.idxStart != st.idxNextOrNone() {
		return sstable.ErrSerial
	}
	r := st.r
	done := 0
	for _, e := range g.events {
		for ; done < e.problems; done++ {
			r.add(g.problems.Problems[done])
		}
		key := g.keys[e.key[0]:e.key[1]]
		switch e.kind {
		case evPartition:
			st.counted(key)
		case evFirstKey:
			st.checkOrder(e.pos, key)
		case evEntry:
			st.sc.entry(e.pos, key)
		}
	}
	for ; done < len(g.problems.Problems); done++ {
		r.add(g.problems.Problems[done])
	}
	st.stc.merge(g.stats)
	if st.digest != nil {
		st.digest.Add(&g.digest)
	}
	w := &g.own
	if w.havePrev {
		st.prevKey, st.havePrev = append(st.prevKey[:0], w.prevKey...), true
	}
	if st.hasIndex {
		st.idxActive = w.idx != nil
		if w.idx != nil {
			st.idxNext = w.idx.Pos()
		}
	}
	if st.follow != nil {
		st.follow.Take(w.follow)
	}
	if st.progress != nil {
		st.progress(g.lastOffset, st.s.Data().Length())
	}
	return nil
}

// idxNextOrNone is where the next segment's Index.db walk must begin: the
// position after the last entry read, or -1 once the index walk ended.
func (st *structure) idxNextOrNone() int64 {
	if !st.idxActive {
		return -1
	}
	return st.idxNext
}

// counted takes a partition read: counted, its key added to the rebuilt
// filter.
func (st *structure) counted(key []byte) {
	st.r.Partitions++
	st.fc.key(key)
}

// checkOrder compares a segment's first key with the key before it.
func (st *structure) checkOrder(offset int64, key []byte) {
	if st.havePrev && st.s.Partitioner().CompareKeys(st.prevKey, key) >= 0 {
		st.r.add(orderProblem(st.s, st.dataPath, offset, key, st.prevKey))
	}
}

func orderProblem(s *sstable.SSTable, dataPath string, offset int64, key, prev []byte) Problem {
	return Problem{File: dataPath, Component: "Data.db", Offset: offset,
		Message: fmt.Sprintf("partition key %x is not after the previous key %x in %s order", key, prev, s.Partitioner().Name())}
}

// partition checks one partition whose header was just read, and reads
// the rest of it.
func (w *walker) partition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	st, r := w.st, w.r
	if w.seg != nil {
		w.seg.event(evPartition, 0, h.Key)
	} else {
		st.counted(h.Key)
	}
	if !h.Deletion.IsLive() && h.Deletion.LocalDeletionTime < 0 {
		// Only the legacy layout stores a signed int; 5.0 reads this as
		// an InvalidDeletionTime and scrub rewrites it.
		r.add(Problem{File: st.dataPath, Component: "Data.db", Offset: h.Offset + 2 + int64(len(h.Key)),
			Message: fmt.Sprintf("partition deletion of key %x: localDeletionTime %d is negative (an overflowed or invalid deletion time; sstablescrub rewrites it)", h.Key, h.Deletion.LocalDeletionTime)})
	}
	part := st.s.Partitioner()
	tok := part.Token(h.Key)
	switch {
	case w.havePrev:
		if token.CompareDecorated(w.prevToken, w.prevKey, tok, h.Key) >= 0 {
			r.add(orderProblem(st.s, st.dataPath, h.Offset, h.Key, w.prevKey))
		}
	case w.seg != nil:
		w.seg.event(evFirstKey, h.Offset, h.Key)
	}
	w.prevKey, w.havePrev = append(w.prevKey[:0], h.Key...), true
	if part.PreservesOrder() {
		// An ordered token holds the key's bytes: take it from the copy.
		tok = part.Token(w.prevKey)
	}
	w.prevToken = tok
	w.stc.startPartition(h)
	if w.dg != nil {
		w.dg.Partition(h.Key, h.Deletion)
	}
	var bw *blockWalk
	if idx := w.idx; idx != nil {
		if !idx.Next() {
			if idx.Err() != nil {
				r.addErr(st.indexPath, "Index.db", idx.Err())
			} else {
				r.add(Problem{File: st.indexPath, Component: "Index.db", Offset: idx.Pos(),
					Message: fmt.Sprintf("ends before the partition at Data.db byte %d", h.Offset)})
			}
			w.idx = nil
		} else {
			if checkEntry(st.indexPath, r, idx, h) && idx.Entry().Indexed() {
				n := idx.Pos() - idx.EntryPos()
				if int64(cap(w.rawEntry)) < n {
					w.rawEntry = make([]byte, n)
				}
				w.rawEntry = w.rawEntry[:n]
				if _, err := st.s.Index().ReadAt(w.rawEntry, idx.EntryPos()); err != nil {
					r.addErr(st.indexPath, "Index.db", err)
				} else {
					bw = newBlockWalk(r, st.indexPath, st.s.IndexCodec(), idx.Entry(), idx.EntryPos(), w.rawEntry, &w.canonEntry)
				}
			}
			if w.seg != nil {
				w.seg.event(evEntry, idx.EntryPos(), idx.Entry().Key)
			} else {
				st.sc.entry(idx.EntryPos(), idx.Entry().Key)
			}
		}
	}
	var rw *rowsWalk
	if st.bc != nil {
		rw = st.bc.partition(h)
	}
	each := w.stc.unfiltered
	if w.follow != nil {
		w.follow.Partition(h)
		each = w.unfiltered
	}
	err := walkPartition(dec, h, bw, rw, st.skimRows && w.follow == nil, each, w.dg)
	if st.bc != nil && err == nil {
		st.bc.done(h, rw)
	}
	for _, a := range dec.TakeTimeAnomalies() {
		r.add(Problem{File: st.dataPath, Component: "Data.db", Offset: a.Offset,
			Message: fmt.Sprintf("%s: stored delta %d, read as %d: %s", a.What, a.Raw, a.Value, a.Reason)})
	}
	if err != nil {
		r.addErr(st.dataPath, "Data.db", err)
		return errStop
	}
	w.stc.endPartition(dec.Pos() - h.Offset)
	if w.dg != nil {
		w.dg.End()
	}
	if w.follow != nil {
		w.follow.End(dec.Pos())
	}
	return nil
}

// unfiltered takes an unfiltered for the rebuilt stats and the follower.
func (w *walker) unfiltered(u *rows.Unfiltered) {
	w.stc.unfiltered(u)
	w.follow.Unfiltered(u)
}
