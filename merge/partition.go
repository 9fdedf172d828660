package merge

import (
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/token"
)

// source is one sstable's decoder over the partition being merged.
type source struct {
	idx                   int // in Table.SSTables()
	file                  string
	dec                   *rows.Decoder
	staticMap, regularMap []int

	// The partition header last read.
	key      []byte
	tok      token.Token
	deletion deletiontime.DeletionTime
	offset   int64
	ready    bool // a header is read and its partition not merged yet
	eof      bool

	cur       *rows.Unfiltered // the decoder's current unfiltered; nil at the partition's end
	static    rows.Unfiltered  // the partition's static row, copied out of the decoder
	hasStatic bool
	staticBuf []byte

	// openAt is the range deletion open where a lookup that seeked into
	// the partition (GetFrom) started reading it.
	openAt    deletiontime.DeletionTime
	hasOpenAt bool
}

// readHeader reads the next partition header; false at the end of
// Data.db.
func (s *source) readHeader() error {
	var h rows.PartitionHeader
	if err := s.dec.ReadPartitionHeader(&h); err != nil {
		if err == io.EOF {
			s.eof, s.ready = true, false
			return nil
		}
		return withPath(s.file, err)
	}
	s.setHeader(&h)
	return nil
}

func (s *source) setHeader(h *rows.PartitionHeader) {
	s.key = append(s.key[:0], h.Key...)
	s.deletion, s.offset, s.ready = h.Deletion, h.Offset, true
	s.cur, s.hasStatic, s.hasOpenAt = nil, false, false
}

// start reads the partition's first unfiltered, keeping a static row
// aside.
func (s *source) start() error {
	if err := s.advance(); err != nil {
		return err
	}
	if s.cur != nil && s.cur.Kind == rows.KindStaticRow {
		s.staticBuf = cloneInto(&s.static, s.cur, s.staticBuf[:0])
		s.hasStatic = !s.static.IsEmpty()
		return s.advance()
	}
	return nil
}

func (s *source) advance() error {
	u, err := s.dec.Next(false)
	if err != nil {
		s.cur = nil
		return withPath(s.file, err)
	}
	s.cur = u
	return nil
}

// finish skips what is left of the partition.
func (s *source) finish() error {
	s.cur = nil
	if s.dec.InPartition() {
		if err := s.dec.SkipRest(); err != nil {
			return withPath(s.file, err)
		}
	}
	return nil
}

func (s *source) cmap(kind rows.Kind) []int {
	if kind == rows.KindStaticRow {
		return s.staticMap
	}
	return s.regularMap
}

// cloneInto copies src into dst, its bytes into buf (returned grown), so
// that dst outlives the decoder's next call.
func cloneInto(dst, src *rows.Unfiltered, buf []byte) []byte {
	cells, cds := dst.Cells[:0], dst.ComplexDeletions[:0]
	*dst = *src
	need := 0
	for _, v := range src.Clustering {
		need += len(v)
	}
	for _, v := range src.Bound.Values {
		need += len(v)
	}
	for i := range src.Cells {
		need += len(src.Cells[i].Path) + len(src.Cells[i].Value)
	}
	if cap(buf)-len(buf) < need {
		buf = make([]byte, 0, len(buf)+need)
	}
	keep := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		at := len(buf)
		buf = append(buf, b...)
		return buf[at:len(buf):len(buf)]
	}
	dst.Clustering = nil
	for _, v := range src.Clustering {
		dst.Clustering = append(dst.Clustering, keep(v))
	}
	dst.Bound.Values = nil
	for _, v := range src.Bound.Values {
		dst.Bound.Values = append(dst.Bound.Values, keep(v))
	}
	for _, c := range src.Cells {
		c.Path, c.Value = keep(c.Path), keep(c.Value)
		cells = append(cells, c)
	}
	dst.Cells = cells
	dst.ComplexDeletions = append(cds, src.ComplexDeletions...)
	return buf
}

// Partition is one merged partition: its header (the key and the merged
// partition deletion) and, through Next, its static row, rows and range
// tombstone markers in clustering order, each merged from the sstables
// that hold the partition as Cassandra's read path and compaction merge
// them, then purged as Options say.
type Partition struct {
	// Header's Key is the partition key, Deletion the merged partition
	// deletion (LIVE for none), Offset the partition's position in the
	// newest sstable that holds it (HeaderSource for the deletion's).
	Header rows.PartitionHeader
	// Sources are the sstables holding the partition (indexes into
	// Table.SSTables(), ascending); DeletionSource the one whose partition
	// deletion was kept (-1 for none).
	Sources        []int
	DeletionSource int

	t    *Table
	o    *resolved
	srcs []*source
	rm   rowMerger // regular rows
	sm   rowMerger // the static row
	vs   []version
	rec  *recorder

	partDel activeDeletion // before purging
	open    []deletiontime.DeletionTime
	isOpen  []bool
	biggest int // in srcs, -1 when no range is open

	staticDone bool
	advance    []int // srcs whose current unfiltered the last output used
	out        *rows.Unfiltered
	prov       *Provenance
	pending    bool // out is computed and not returned yet (lookahead)
	marker     rows.Unfiltered
	markerProv Provenance
	done       bool
	err        error
	from       *clustering.Prefix // GetFrom's start: what sorts before is not returned
}

// reset prepares p for the partition the sources (ready, same key) hold.
func (p *Partition) reset(t *Table, o *resolved, srcs []*source, rec *recorder) {
	p.t, p.o, p.srcs, p.rec = t, o, srcs, rec
	p.Sources = p.Sources[:0]
	for _, s := range srcs {
		p.Sources = append(p.Sources, s.idx)
	}
	p.rm.cols, p.rm.static, p.rm.rec = t.regular, false, rec
	p.sm.cols, p.sm.static, p.sm.rec = t.static, true, rec
	p.rm.t, p.sm.t = t, t
	p.open = resizeDT(p.open, len(srcs))
	p.isOpen = resizeBool(p.isOpen, len(srcs))
	p.biggest = -1
	for i, s := range srcs {
		// A source that seeked into the partition starts inside the
		// range its index says is open there.
		if s.hasOpenAt {
			p.open[i], p.isOpen[i] = s.openAt, true
			if p.biggest < 0 || supersedes(s.openAt, p.open[p.biggest]) {
				p.biggest = i
			}
		}
	}
	p.from = nil
	p.staticDone, p.pending, p.done, p.err = false, false, false, nil
	p.advance = p.advance[:0]
	p.out, p.prov = nil, nil

	// UnfilteredRowMergeIterator.collectPartitionLevelDeletion: the
	// deletion no other supersedes (on a tie, the later sstable's).
	p.partDel = noDeletion
	for _, s := range srcs {
		if !supersedes(p.partDel.dt, s.deletion) {
			p.partDel = activeDeletion{dt: s.deletion, src: s.idx, what: ShadowedByPartitionDeletion}
		}
	}
	if p.partDel.dt.IsLive() {
		p.partDel.src = -1
	}
	newest := srcs[len(srcs)-1]
	p.Header = rows.PartitionHeader{Key: newest.key, Offset: newest.offset, Deletion: p.partDel.dt}
	p.DeletionSource = p.partDel.src
	if rec != nil {
		rec.e.Key = append([]byte(nil), newest.key...)
		rec.e.Holding = append([]int(nil), p.Sources...)
		rec.e.Merged = p.partDel.dt
		for _, s := range srcs {
			if s.deletion.IsLive() {
				continue
			}
			v := Version{SSTable: s.idx, What: WhatPartitionDeletion, Column: -1, Deletion: s.deletion}
			if s.idx != p.partDel.src {
				v.Verdict = deletionLoss(p.partDel.dt, s.deletion)
				v.By = p.partDel.cause()
			}
			rec.e.PartitionDeletion = append(rec.e.PartitionDeletion, v)
		}
	}
	// PurgeFunction.applyToDeletion.
	if p.o.shouldPurgeDeletion(p.Header.Deletion) {
		p.Header.Deletion = deletiontime.Live
		p.DeletionSource = -1
		if rec != nil {
			for i := range rec.e.PartitionDeletion {
				if rec.e.PartitionDeletion[i].Verdict == Won {
					rec.e.PartitionDeletion[i].Verdict = Purged
				}
			}
		}
	}
}

func resizeDT(s []deletiontime.DeletionTime, n int) []deletiontime.DeletionTime {
	if cap(s) < n {
		s = make([]deletiontime.DeletionTime, n)
	}
	return s[:n]
}

func resizeBool(s []bool, n int) []bool {
	if cap(s) < n {
		s = make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// Next returns the partition's next merged unfiltered (its static row
// first, when it has one), nil at the end. The unfiltered and its
// Provenance are valid until the next call; their bytes alias the
// sstables' buffers, so a caller that keeps them copies them
// (Unfiltered.Clone).
func (p *Partition) Next() (*rows.Unfiltered, error) {
	if p.err != nil {
		return nil, p.err
	}
	if p.pending {
		p.pending = false
		return p.out, nil
	}
	u, err := p.next()
	if err != nil {
		p.err = err
	}
	return u, err
}

// Provenance is the provenance of the unfiltered Next returned last.
func (p *Partition) Provenance() *Provenance { return p.prov }

// Table is the table the partition belongs to.
func (p *Partition) Table() *Table { return p.t }

func (p *Partition) next() (*rows.Unfiltered, error) {
	for _, i := range p.advance {
		if err := p.srcs[i].advance(); err != nil {
			return nil, err
		}
	}
	p.advance = p.advance[:0]
	p.out, p.prov = nil, nil
	if p.done {
		return nil, nil
	}
	if !p.staticDone {
		p.staticDone = true
		u, prov, err := p.mergeStatic()
		p.rec.done()
		if err != nil || u != nil {
			p.out, p.prov = u, prov
			return u, err
		}
	}
	for {
		// The sources at the smallest position.
		var min *rows.Unfiltered
		for _, s := range p.srcs {
			if s.cur == nil {
				continue
			}
			if min == nil || p.t.cmp().unfiltereds(s.cur, min) < 0 {
				min = s.cur
			}
		}
		if min == nil {
			p.done = true
			p.rec.done()
			return nil, nil
		}
		for i, s := range p.srcs {
			if s.cur != nil && (s.cur == min || p.t.cmp().unfiltereds(s.cur, min) == 0) {
				p.advance = append(p.advance, i)
			}
		}
		var u *rows.Unfiltered
		var prov *Provenance
		var err error
		if min.Kind == rows.KindMarker {
			u, prov = p.mergeMarkers()
		} else {
			u, prov, err = p.mergeRows()
		}
		p.rec.done()
		if err != nil {
			return nil, err
		}
		if u != nil && !p.before(u) {
			p.out, p.prov = u, prov
			return u, nil
		}
		for _, i := range p.advance {
			if err := p.srcs[i].advance(); err != nil {
				return nil, err
			}
		}
		p.advance = p.advance[:0]
	}
}

// mergeStatic is UnfilteredRowMergeIterator.mergeStaticRows: with static
// columns and a static row in some sstable, every sstable's static row
// (empty where it has none) merges under the partition deletion.
func (p *Partition) mergeStatic() (*rows.Unfiltered, *Provenance, error) {
	if len(p.t.static) == 0 {
		return nil, nil, nil
	}
	any := false
	for _, s := range p.srcs {
		any = any || s.hasStatic
	}
	if !any {
		return nil, nil, nil
	}
	p.vs = p.vs[:0]
	for _, s := range p.srcs {
		if !s.hasStatic {
			s.static = rows.Unfiltered{Kind: rows.KindStaticRow, Cells: s.static.Cells[:0], ComplexDeletions: s.static.ComplexDeletions[:0]}
		}
		p.vs = append(p.vs, version{src: s.idx, u: &s.static, cmap: s.staticMap})
	}
	if p.rec != nil {
		p.rec.begin(rows.KindStaticRow, nil, clustering.Prefix{Kind: clustering.StaticClustering})
	}
	if p.vs = p.sm.dropVersions(p.vs); len(p.vs) == 0 {
		return nil, nil, nil
	}
	ok, err := p.sm.merge(p.vs, p.partDel)
	if err != nil || !ok {
		return nil, nil, err
	}
	if !p.o.purgeRow(&p.sm.out, &p.sm.prov, p.rec) {
		return nil, nil, nil
	}
	if p.rec != nil {
		p.rec.output(&p.sm.out, &p.sm.prov)
	}
	return &p.sm.out, &p.sm.prov, nil
}

// mergeRows merges the rows of one clustering (the sources in advance).
func (p *Partition) mergeRows() (*rows.Unfiltered, *Provenance, error) {
	p.vs = p.vs[:0]
	for _, i := range p.advance {
		s := p.srcs[i]
		p.vs = append(p.vs, version{src: s.idx, u: s.cur, cmap: s.cmap(s.cur.Kind)})
	}
	if p.rec != nil {
		p.rec.begin(rows.KindRow, p.vs[0].u.Clustering, clustering.Prefix{})
	}
	if p.vs = p.rm.dropVersions(p.vs); len(p.vs) == 0 {
		return nil, nil, nil
	}
	var ok bool
	var err error
	if len(p.srcs) == 1 {
		// One sstable: its rows pass as they are (MergeIterator's
		// TrivialOneToOne), only purged.
		p.rm.passThrough(&p.vs[0])
		ok = true
	} else {
		ok, err = p.rm.merge(p.vs, p.activeDeletion())
	}
	if err != nil || !ok {
		return nil, nil, err
	}
	if !p.o.purgeRow(&p.rm.out, &p.rm.prov, p.rec) {
		return nil, nil, nil
	}
	if p.rec != nil {
		p.rec.output(&p.rm.out, &p.rm.prov)
	}
	return &p.rm.out, &p.rm.prov, nil
}

// currentOpen is RangeTombstoneMarker.Merger.currentOpenDeletionTimeInMerged:
// the largest open range deletion, when it supersedes the partition's.
func (p *Partition) currentOpen() activeDeletion {
	if p.biggest < 0 {
		return noDeletion
	}
	dt := p.open[p.biggest]
	if !supersedes(dt, p.partDel.dt) {
		return noDeletion
	}
	return activeDeletion{dt: dt, src: p.srcs[p.biggest].idx, what: ShadowedByRangeDeletion}
}

// activeDeletion is the Merger's activeDeletion: the open range deletion,
// else the partition deletion.
func (p *Partition) activeDeletion() activeDeletion {
	if o := p.currentOpen(); !o.dt.IsLive() {
		return o
	}
	return p.partDel
}

// opens is RangeTombstoneMarker.isOpen and openDeletionTime (in forward
// order): a start bound or any boundary opens a range.
func opens(u *rows.Unfiltered) (deletiontime.DeletionTime, bool) {
	switch {
	case u.Bound.Kind.IsBoundary():
		return u.StartDeletion, true
	case u.Bound.Kind.IsStart():
		return u.Deletion, true
	}
	return deletiontime.DeletionTime{}, false
}

func closes(u *rows.Unfiltered) (deletiontime.DeletionTime, bool) {
	switch {
	case u.Bound.Kind.IsBoundary():
		return u.EndDeletion, true
	case !u.Bound.Kind.IsStart():
		return u.Deletion, true
	}
	return deletiontime.DeletionTime{}, false
}

// mergeMarkers is RangeTombstoneMarker.Merger.merge for the markers of
// one position: it updates the ranges open in each sstable and returns
// the marker the merged stream needs where its open deletion changes.
func (p *Partition) mergeMarkers() (*rows.Unfiltered, *Provenance) {
	last := p.srcs[p.advance[len(p.advance)-1]].cur
	if p.rec != nil {
		p.rec.begin(rows.KindMarker, nil, last.Bound)
	}
	if len(p.srcs) == 1 {
		return p.passMarker(p.srcs[0], last)
	}
	prev := p.currentOpen()
	prevBiggest := p.biggest
	for _, i := range p.advance {
		p.open[i], p.isOpen[i] = opens(p.srcs[i].cur)
	}
	p.biggest = -1
	for i := range p.open {
		if p.isOpen[i] && (p.biggest < 0 || supersedes(p.open[i], p.open[p.biggest])) {
			p.biggest = i
		}
	}
	now := p.currentOpen()
	if p.rec != nil {
		p.recordMarkers(prev, prevBiggest, now)
	}
	if prev.dt == now.dt {
		return nil, nil
	}
	before := kindOrder[last.Bound.Kind].toClustering < 0
	m := &p.marker
	*m = rows.Unfiltered{Kind: rows.KindMarker, Flags: rows.FlagIsMarker, Bound: clustering.Prefix{Values: last.Bound.Values}}
	p.markerProv.reset()
	at := now.src
	switch {
	case prev.dt.IsLive():
		m.Bound.Kind = pick(before, clustering.InclStartBound, clustering.ExclStartBound)
		m.Deletion = now.dt
		p.markerProv.Deletion = now.src
	case now.dt.IsLive():
		m.Bound.Kind = pick(before, clustering.ExclEndBound, clustering.InclEndBound)
		m.Deletion = prev.dt
		p.markerProv.Deletion, at = prev.src, prev.src
	default:
		m.Bound.Kind = pick(before, clustering.ExclEndInclStartBoundary, clustering.InclEndExclStartBoundary)
		m.EndDeletion, m.StartDeletion = prev.dt, now.dt
		p.markerProv.End, p.markerProv.Start = prev.src, now.src
	}
	m.Offset = last.Offset
	p.markerProv.Row = p.srcs[p.advance[len(p.advance)-1]].idx
	for _, i := range p.advance {
		if p.srcs[i].idx == at {
			m.Offset, p.markerProv.Row = p.srcs[i].cur.Offset, at
		}
	}
	if !p.o.purgeMarker(m, &p.markerProv, p.rec) {
		return nil, nil
	}
	if p.rec != nil {
		p.rec.output(m, &p.markerProv)
	}
	return m, &p.markerProv
}

func pick(before bool, a, b clustering.Kind) clustering.Kind {
	if before {
		return a
	}
	return b
}

// passMarker is a marker of a partition only one sstable holds, as it is.
func (p *Partition) passMarker(s *source, u *rows.Unfiltered) (*rows.Unfiltered, *Provenance) {
	m := &p.marker
	*m = *u
	m.Cells, m.ComplexDeletions, m.Clustering = nil, nil, nil
	p.markerProv.reset()
	p.markerProv.Row = s.idx
	if u.Bound.Kind.IsBoundary() {
		p.markerProv.End, p.markerProv.Start = s.idx, s.idx
	} else {
		p.markerProv.Deletion = s.idx
	}
	if p.rec != nil {
		dt, _ := opens(u)
		if !u.Bound.Kind.IsBoundary() && !u.Bound.Kind.IsStart() {
			dt = u.Deletion
		}
		p.rec.add(Version{SSTable: s.idx, What: WhatRangeTombstone, Column: -1, Deletion: dt, Bound: u.Bound.Kind})
	}
	if !p.o.purgeMarker(m, &p.markerProv, p.rec) {
		return nil, nil
	}
	if p.rec != nil {
		p.rec.output(m, &p.markerProv)
	}
	return m, &p.markerProv
}

// recordMarkers gives each sstable's marker at this position its
// verdict: the one whose range the merged stream opens (or closes) won;
// the others are shadowed by the larger open range or the partition
// deletion.
func (p *Partition) recordMarkers(prev activeDeletion, prevBiggest int, now activeDeletion) {
	for _, i := range p.advance {
		u := p.srcs[i].cur
		src := p.srcs[i].idx
		v := Version{SSTable: src, What: WhatRangeTombstone, Column: -1, Bound: u.Bound.Kind}
		if dt, ok := opens(u); ok {
			v.Deletion = dt
			switch {
			case i == p.biggest && !now.dt.IsLive():
			case !now.dt.IsLive():
				v.Verdict, v.By = rangeLoss(now.dt, dt), now.cause()
			default:
				v.Verdict, v.By = ShadowedByPartitionDeletion, p.partDel.cause()
			}
		} else {
			dt, _ := closes(u)
			v.Deletion = dt
			switch {
			case i == prevBiggest && !prev.dt.IsLive():
			case !prev.dt.IsLive():
				v.Verdict, v.By = rangeLoss(prev.dt, dt), prev.cause()
			default:
				v.Verdict, v.By = ShadowedByPartitionDeletion, p.partDel.cause()
			}
		}
		p.rec.add(v)
	}
}

// rangeLoss is why a range deletion lost to the larger one open over it.
func rangeLoss(winner, dt deletiontime.DeletionTime) Reason {
	if winner == dt {
		return Duplicate
	}
	return ShadowedByRangeDeletion
}
