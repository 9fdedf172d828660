package merge

import (
	"bytes"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/filter"
)

// Scanner merges a whole table, partition by partition in token order
// (the partitioner's token, then the key's bytes: DecoratedKey order),
// as a major compaction reads it. It holds one decoder per sstable and,
// of each, one unfiltered at a time, so its memory does not grow with
// the table or its partitions.
type Scanner struct {
	t    *Table
	o    *resolved
	srcs []*source
	part Partition
	hold []*source // the sources of the partition last returned
	err  error
	acc  *Reclaim  // Account's
	rec  *recorder // its recorder, one position at a time
}

// Scan starts a merge of every partition of the table.
func (t *Table) Scan(o Options) (*Scanner, error) {
	sc := &Scanner{t: t, o: t.resolve(o)}
	for i, s := range t.ssts {
		src := &source{idx: i, file: t.Name(i), dec: s.Decoder(0), staticMap: t.staticMap[i], regularMap: t.regularMap[i]}
		if err := src.readHeader(); err != nil {
			return nil, err
		}
		if src.ready {
			src.tok = t.partitioner.Token(src.key)
		}
		sc.srcs = append(sc.srcs, src)
	}
	return sc, nil
}

// Next returns the next merged partition, nil at the end. The partition
// is valid until the next call; a partition that the merge and purge
// leave empty (no deletion, no rows) is not returned, as compaction
// writes none. What the caller leaves of a partition's unfiltereds is
// skipped.
func (sc *Scanner) Next() (*Partition, error) {
	if sc.err != nil {
		return nil, sc.err
	}
	p, err := sc.next()
	if err != nil {
		sc.err = err
	}
	return p, err
}

func (sc *Scanner) next() (*Partition, error) {
	for {
		if sc.acc != nil && len(sc.hold) > 0 {
			// What the caller left of the partition is merged for the
			// accounting.
			for !sc.part.done && sc.part.err == nil {
				if _, err := sc.part.Next(); err != nil {
					return nil, err
				}
			}
		}
		for _, s := range sc.hold {
			if err := s.finish(); err != nil {
				return nil, err
			}
			if err := s.readHeader(); err != nil {
				return nil, err
			}
			if s.ready {
				s.tok = sc.t.partitioner.Token(s.key)
			}
		}
		sc.hold = sc.hold[:0]
		var first *source
		for _, s := range sc.srcs {
			if s.ready && (first == nil || compareDecorated(s, first) < 0) {
				first = s
			}
		}
		if first == nil {
			return nil, nil
		}
		for _, s := range sc.srcs {
			if s.ready && (s == first || compareDecorated(s, first) == 0) {
				sc.hold = append(sc.hold, s)
			}
		}
		for _, s := range sc.hold {
			if err := s.start(); err != nil {
				return nil, err
			}
		}
		var rec *recorder
		if sc.acc != nil {
			if sc.rec == nil {
				sc.rec = &recorder{e: &Explanation{}, flush: sc.acc.entry}
			}
			rec = sc.rec
			rec.entry, rec.e.PartitionDeletion = nil, rec.e.PartitionDeletion[:0]
		}
		sc.part.reset(sc.t, sc.o, sc.hold, rec)
		if ok, err := sc.part.prime(); err != nil || ok {
			return &sc.part, err
		}
	}
}

// Pos is how far the scan has read: the sum of the sstables' Data.db
// positions, for progress against DataLength.
func (sc *Scanner) Pos() int64 {
	var n int64
	for _, s := range sc.srcs {
		n += s.dec.Pos()
	}
	return n
}

// DataLength is the sum of the sstables' uncompressed Data.db lengths.
func (t *Table) DataLength() int64 {
	var n int64
	for _, s := range t.ssts {
		n += s.Data().Length()
	}
	return n
}

func compareDecorated(a, b *source) int {
	if c := a.tok.Compare(b.tok); c != 0 {
		return c
	}
	return bytes.Compare(a.key, b.key)
}

// prime computes the partition's first unfiltered so that an empty
// partition can be left out (PurgeFunction.applyToPartition): false when
// the partition is empty.
func (p *Partition) prime() (bool, error) {
	u, err := p.next()
	if err != nil {
		p.err = err
		return true, err
	}
	if u == nil && p.Header.Deletion.IsLive() {
		return false, nil
	}
	p.pending = u != nil
	return true, nil
}

// Get merges the partition of key (its bytes as stored: a composite key
// serialized) from the sstables that hold it, found through each one's
// index (Filter.db first, where present, then Summary.db and Index.db or
// Partitions.db): a lookup reads no sstable whole. It returns nil when no
// sstable holds the key or the merge leaves the partition empty. The
// partition is valid until the next Get or Explain (they share each
// sstable's lookup decoder; a Scan has decoders of its own).
func (t *Table) Get(key []byte, o Options) (*Partition, error) {
	p, err := t.get(key, t.resolve(o), nil)
	if err != nil || p == nil {
		return nil, err
	}
	ok, err := p.prime()
	if err != nil || !ok {
		return nil, err
	}
	return p, nil
}

// get opens the partition of key in each sstable that holds it.
func (t *Table) get(key []byte, o *resolved, rec *recorder) (*Partition, error) {
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
		var h rows.PartitionHeader
		dec, err := s.PartitionAt(e.Position, &h)
		if err != nil {
			return nil, withPath(t.Name(i), err)
		}
		if !bytes.Equal(h.Key, key) {
			continue // the index points elsewhere; the key is not there
		}
		src := &source{idx: i, file: t.Name(i), dec: dec, staticMap: t.staticMap[i], regularMap: t.regularMap[i]}
		src.setHeader(&h)
		if err := src.start(); err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
	}
	if len(srcs) == 0 {
		return nil, nil
	}
	p := &Partition{}
	p.reset(t, o, srcs, rec)
	return p, nil
}

// mayContain asks sstable i's Filter.db; an sstable without one (or
// with one that does not read) may hold any key.
func (t *Table) mayContain(i int, key []byte) bool {
	if !t.filterRead[i] {
		t.filterRead[i] = true
		s := t.ssts[i]
		if s.HasComponent(format.ComponentFilter) {
			if bf, err := filter.ReadFile(s.Path(format.ComponentFilter), s.Version().HasOldBloomFilterFormat); err == nil {
				t.filters[i] = bf
			}
		}
	}
	bf := t.filters[i]
	return bf == nil || bf.MightContain(key)
}

// Explain merges the partition of key as Get does, recording every
// version in every sstable and what the merge made of it.
func (t *Table) Explain(key []byte, o Options) (*Explanation, error) {
	ro := t.resolve(o)
	e := &Explanation{Key: append([]byte(nil), key...), Now: ro.now, GCBefore: ro.gcBefore, Purge: ro.purge, Merged: deletiontime.Live}
	p, err := t.get(key, ro, &recorder{e: e})
	if err != nil || p == nil {
		return e, err
	}
	for {
		u, err := p.Next()
		if err != nil {
			return e, err
		}
		if u == nil {
			return e, nil
		}
	}
}
