package merge

import (
	"bytes"
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// Seeking through the indexes: a scan that starts at a token, and a
// lookup that starts within a partition at a clustering, each sstable
// positioned by its own index (Summary.db and Index.db with its promoted
// index, or Partitions.db and Rows.db) so that what lies before is not
// read.

// ScanFrom is Scan starting at the first partition whose token is at
// least from: each sstable is positioned through its index (Summary.db
// then Index.db, or Partitions.db), so the partitions before are not read.
func (t *Table) ScanFrom(from token.Token, o Options) (*Scanner, error) {
	sc := &Scanner{t: t, o: t.resolve(o)}
	for i, s := range t.ssts {
		pos, err := firstAtOrAfter(s, from)
		if err != nil {
			return nil, withPath(t.Name(i), err)
		}
		src := &source{idx: i, file: t.Name(i), dec: s.Decoder(pos), staticMap: t.staticMap[i], regularMap: t.regularMap[i]}
		if pos >= s.Data().Length() {
			src.eof = true
		} else {
			for {
				if err := src.readHeader(); err != nil {
					return nil, err
				}
				if !src.ready {
					break
				}
				src.tok = t.partitioner.Token(src.key)
				if src.tok.Compare(from) >= 0 {
					break
				}
				// The index found the nearest entry before: step over the
				// partitions still below the token by their sizes.
				if err := src.finish(); err != nil {
					return nil, err
				}
			}
		}
		sc.srcs = append(sc.srcs, src)
	}
	return sc, nil
}

// firstAtOrAfter is the Data.db position of the first partition of s with
// a token at least from, or at most a few partitions before it (a summary
// interval of Index.db is walked from the nearest sample; a BTI sstable's
// Partitions.db gives the partition itself); Data.db's length when there
// is none.
func firstAtOrAfter(s *sstable.SSTable, from token.Token) (int64, error) {
	p := s.Partitioner()
	if s.Version().IsBTI() {
		pi := s.Partitions()
		if pi == nil {
			return 0, nil // read Data.db from its start
		}
		bc, err := bytecomparable.AppendToken([]byte{bytecomparable.NextComponent}, from)
		if err != nil {
			return 0, err
		}
		it := pi.Iter()
		if !it.SeekBC(bc) {
			if err := it.Err(); err != nil {
				return 0, err
			}
			return s.Data().Length(), nil
		}
		e := it.Entry()
		if !e.InRowIndex() {
			return e.DataPos(), nil
		}
		if s.Rows() == nil {
			return 0, fmt.Errorf("Partitions.db points into Rows.db, which is missing")
		}
		re, err := s.Rows().Entry(e.RowIndexPos())
		if err != nil {
			return 0, err
		}
		return re.DataPos, nil
	}
	if s.Index() == nil {
		return 0, nil
	}
	start := int64(0)
	if sum, err := s.Summary(); err == nil && sum.Len() > 0 {
		// The last sample whose token is below from.
		i := sum.FloorIndex(nil, func(a, _ []byte) int {
			if p.Token(a).Compare(from) < 0 {
				return -1
			}
			return 1
		})
		if i >= 0 {
			start = sum.Position(i)
		}
	}
	sc := index.NewScanner(s.Index(), s.IndexCodec(), start, false)
	for sc.Next() {
		e := sc.Entry()
		if p.Token(e.Key).Compare(from) >= 0 {
			return e.Position, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return s.Data().Length(), nil
}

// GetFrom is Get for the rows of the partition from start on: start is a
// bound (clustering.InclStartBound or ExclStartBound) on a prefix of the
// clustering columns. Each sstable that holds the key is positioned at
// the index block that may hold start (the promoted index of Index.db, or
// Rows.db), with the range deletion open there (the previous block's
// end-open marker), so the rows of the blocks before are not read. The
// static row comes first as in Get; rows and markers before start are not
// returned. The caller stops where its slice ends.
func (t *Table) GetFrom(key []byte, start clustering.Prefix, o Options) (*Partition, error) {
	if !start.Kind.IsStart() {
		return nil, fmt.Errorf("merge: GetFrom's start is a %v, not a start bound", start.Kind)
	}
	ro := t.resolve(o)
	var srcs []*source
	for i, s := range t.ssts {
		if !t.mayContain(i, key) {
			continue
		}
		e, ok, err := s.Find(key)
		if err != nil {
			return nil, withPath(t.Name(i), err)
		}
		if !ok {
			continue
		}
		src, err := t.seekSource(i, e, start)
		if err != nil {
			return nil, withPath(t.Name(i), err)
		}
		if src != nil {
			srcs = append(srcs, src)
		}
	}
	if len(srcs) == 0 {
		return nil, nil
	}
	p := &Partition{}
	p.reset(t, ro, srcs, nil)
	p.from = &clustering.Prefix{Kind: start.Kind, Values: start.Values}
	ok, err := p.prime()
	if err != nil || !ok {
		return nil, err
	}
	return p, nil
}

// seekSource opens sstable i's partition of entry e with a decoder of its
// own, reads its static row, and moves it to the index block where a
// search for start begins.
func (t *Table) seekSource(i int, e *index.Entry, start clustering.Prefix) (*source, error) {
	s := t.ssts[i]
	dec := s.Decoder(e.Position)
	var h rows.PartitionHeader
	if err := dec.ReadPartitionHeader(&h); err != nil {
		return nil, err
	}
	if !bytes.Equal(h.Key, e.Key) {
		return nil, nil
	}
	src := &source{idx: i, file: t.Name(i), dec: dec, staticMap: t.staticMap[i], regularMap: t.regularMap[i]}
	src.setHeader(&h)
	if err := src.start(); err != nil {
		return nil, err
	}
	off, open, err := t.blockFor(s, e, start)
	if err != nil || off <= 0 {
		return src, err
	}
	at := e.Position + off
	if src.cur == nil || src.cur.Offset >= at {
		return src, nil // already there (or the partition has no rows)
	}
	src.dec = s.Decoder(at)
	src.dec.EnterPartition()
	if err := src.advance(); err != nil {
		return nil, err
	}
	if !open.IsLive() {
		src.openAt, src.hasOpenAt = open, true
	}
	return src, nil
}

// blockFor is where, from the partition's start, the index block that may
// hold start begins, and the range deletion open there (Live for none); 0
// when the partition has no index blocks or start is in the first.
func (t *Table) blockFor(s *sstable.SSTable, e *index.Entry, start clustering.Prefix) (int64, deletiontime.DeletionTime, error) {
	if !s.Version().IsBTI() {
		// IndexState.indexFor: the first block whose last clustering is
		// not before start.
		c := t.cmp()
		for b := range e.Blocks {
			last := e.Blocks[b].LastName
			if c.compare(last.Values, last.Kind, start.Values, start.Kind) >= 0 || b == len(e.Blocks)-1 {
				if b == 0 {
					return 0, deletiontime.Live, nil
				}
				open := deletiontime.Live
				if m := e.Blocks[b-1].EndOpenMarker; m != nil {
					open = *m
				}
				return e.Blocks[b].Offset, open, nil
			}
		}
		return 0, deletiontime.Live, nil
	}
	pi, ri := s.Partitions(), s.Rows()
	if pi == nil || ri == nil {
		return 0, deletiontime.Live, nil
	}
	pp, ok, err := pi.Candidate(e.Key)
	if err != nil || !ok || !pp.InRowIndex() {
		return 0, deletiontime.Live, err
	}
	re, err := ri.Entry(pp.RowIndexPos())
	if err != nil || !bytes.Equal(re.Key, e.Key) {
		return 0, deletiontime.Live, err
	}
	bc, err := bytecomparable.AppendClustering(nil, t.clusteringTypes, start.Kind, start.Values)
	if err != nil {
		return 0, deletiontime.Live, err
	}
	b, _, err := ri.Floor(re, bc)
	if err != nil {
		return 0, deletiontime.Live, err
	}
	open := deletiontime.Live
	if b.HasOpenMarker {
		open = b.OpenDeletion
	}
	return b.Offset, open, nil
}

// before reports whether u sorts before the bound p.from.
func (p *Partition) before(u *rows.Unfiltered) bool {
	if p.from == nil || u.Kind == rows.KindStaticRow {
		return false
	}
	v, k := position(u)
	return p.t.cmp().compare(v, k, p.from.Values, p.from.Kind) < 0
}
