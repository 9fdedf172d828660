package verify

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/reader"
)

// btiCheck walks a BTI sstable's Partitions.db in step with Data.db (the
// trie's order is the partitioner's, so its i-th entry is the i-th
// partition) and checks, for every partition: the entry leads to it, the
// stored prefix is a prefix of its key's byte-comparable form, its hash
// byte is the key's, a lookup of the full key finds the same entry, and a
// Rows.db entry (for partitions with two or more index blocks) names the
// key, the position and the partition deletion, with blocks that start at
// unfiltereds, separators between the clusterings around each start and
// the range deletion open there. A partition the walk does not reach is
// looked up by its key (the node where the lookup stops is reported when
// that fails too) and its Rows.db entry found by its key, so that the
// checks go on. At the end: no entry left over, the footer's key count
// and first and last keys.
//
// Cassandra's trie writers are deterministic, so the check also rebuilds
// both files from what Data.db holds (keys, positions, the blocks' rows)
// with format/bti's writers and compares them byte for byte as they are
// produced: a damaged node, pointer, payload bit or separator that still
// reads as some valid trie is caught where it lies.
type btiCheck struct {
	s        *sstable.SSTable
	r        *Report
	it       *bti.PartitionIterator
	ok       bool // the iterator stands on an entry
	path     string
	rowsPath string
	first    []byte
	last     []byte
	bc       []byte
	prefix   []byte // the current entry's prefix, copied from the iterator
	rowsFrom int64  // where the next partition's Rows.db entry may start
	searched int64  // Rows.db bytes read by recover

	// The rebuild, compared with the files as it is written; nil once a
	// difference or a problem found otherwise makes it pointless.
	partsOut *sameBytes
	rowsOut  *sameBytes
	partsW   *bti.PartitionsWriter
	rowsW    *bti.RowsWriter
}

func newBTICheck(s *sstable.SSTable, r *Report) *btiCheck {
	c := &btiCheck{s: s, r: r, path: s.Path(format.ComponentPartitions), rowsPath: s.Path(format.ComponentRows)}
	if s.Partitions() == nil {
		r.add(Problem{File: c.path, Component: format.ComponentPartitions, Offset: -1, Message: "missing: partition keys cannot be looked up"})
		return nil
	}
	r.Checks = append(r.Checks, "Partitions.db reaches every partition and only those, Rows.db blocks against the rows")
	c.it = s.Partitions().Iter()
	c.ok = c.it.First()
	c.partsOut = &sameBytes{f: s.PartitionsFile(), path: c.path, comp: format.ComponentPartitions}
	c.partsW = bti.NewPartitionsWriter(c.partsOut, s.Partitioner())
	if rf := s.RowsFile(); rf != nil {
		c.rowsOut = &sameBytes{f: rf, path: c.rowsPath, comp: format.ComponentRows}
		c.rowsW = bti.NewRowsWriter(c.rowsOut, s.Version())
	}
	return c
}

// done adds the partition just walked to the rebuild: with its row index
// blocks as the rows delimit them, when it has any.
func (c *btiCheck) done(h *rows.PartitionHeader, w *rowsWalk) {
	if c.partsW == nil {
		return
	}
	var err error
	if w == nil {
		err = c.partsW.AddData(h.Key, h.Offset)
	} else if w.failed || c.rowsW == nil {
		c.partsW = nil // the problem is reported; a rebuild would only repeat it
		return
	} else {
		var pos int64
		if pos, err = c.rowsW.AddPartition(h.Key, h.Offset, h.Deletion, w.built, w.endRel); err == nil {
			err = c.partsW.AddRowIndex(h.Key, pos)
		}
	}
	if err != nil {
		c.problem(c.path, format.ComponentPartitions, -1, "cannot rebuild the index for key %x: %v", h.Key, err)
		c.partsW = nil
	}
}

func (c *btiCheck) problem(file, comp string, off int64, format string, args ...any) {
	c.r.add(Problem{File: file, Component: comp, Offset: off, Message: fmt.Sprintf(format, args...)})
}

// partition checks the entry of the partition h and returns a walk for
// its row index blocks, or nil.
func (c *btiCheck) partition(h *rows.PartitionHeader) *rowsWalk {
	if c.first == nil {
		c.first = append([]byte{}, h.Key...)
	}
	c.last = append(c.last[:0], h.Key...)
	var err error
	if c.bc, err = bytecomparable.AppendDecoratedKey(c.bc[:0], c.s.Partitioner(), h.Key); err != nil {
		c.r.addErr(c.path, format.ComponentPartitions, err)
		if c.it != nil && c.ok {
			c.ok = c.it.Next() // the entry is taken to be this partition's
		}
		return nil
	}
	e, ok := c.entry(h)
	if !ok {
		return c.recover(h)
	}
	if !bytes.HasPrefix(c.bc, e.Prefix) {
		c.problem(c.path, format.ComponentPartitions, e.NodePos, "entry %x is not a prefix of the byte-comparable key %x of the partition at Data.db byte %d", e.Prefix, c.bc, h.Offset)
	}
	if e.HasHash && e.Hash != bti.KeyHash(h.Key) {
		c.problem(c.path, format.ComponentPartitions, e.NodePos, "hash byte %#02x, the key's is %#02x (partition at Data.db byte %d)", e.Hash, bti.KeyHash(h.Key), h.Offset)
	}
	if l, found, err := c.s.Partitions().LookupBC(c.bc, bti.KeyHash(h.Key)); err != nil {
		c.r.addErr(c.path, format.ComponentPartitions, err)
	} else if !found {
		c.problem(c.path, format.ComponentPartitions, e.NodePos, "a lookup of key %x finds no entry (it stops at the node at byte %d), expected this one (pointing at %s)", h.Key, l.NodePos, target(e.PartitionPayload))
	} else if l.Pos != e.Pos {
		c.problem(c.path, format.ComponentPartitions, e.NodePos, "a lookup of key %x finds the entry at byte %d (pointing at %s), expected this one (pointing at %s)", h.Key, l.NodePos, target(l.PartitionPayload), target(e.PartitionPayload))
	}
	if !e.InRowIndex() {
		if e.DataPos() != h.Offset {
			c.problem(c.path, format.ComponentPartitions, e.NodePos, "entry points at Data.db byte %d, the partition of key %x starts at %d", e.DataPos(), h.Key, h.Offset)
			return c.recover(h)
		}
		return nil
	}
	if c.s.Rows() == nil {
		c.problem(c.rowsPath, format.ComponentRows, -1, "missing, although Partitions.db points into it for key %x", h.Key)
		return nil
	}
	// A Rows.db entry that does not fit may as well be a damaged pointer:
	// say which Partitions.db entry led there.
	from := fmt.Sprintf(" (reached from Partitions.db's entry at byte %d)", e.NodePos)
	re, err := c.s.Rows().Entry(e.RowIndexPos())
	switch {
	case err != nil:
		var ce *corrupt.Error
		if errors.As(err, &ce) {
			err = corrupt.New(ce.File, ce.Component, ce.Offset, ce.Expected+from, ce.Err)
		}
		c.r.addErr(c.rowsPath, format.ComponentRows, err)
		return c.recover(h)
	case !bytes.Equal(re.Key, h.Key):
		c.problem(c.rowsPath, format.ComponentRows, re.Pos, "entry key %x, the partition's is %x%s", re.Key, h.Key, from)
		return c.recover(h)
	case re.DataPos != h.Offset:
		c.problem(c.rowsPath, format.ComponentRows, re.Pos, "entry of key %x points at Data.db byte %d, the partition starts at %d%s", h.Key, re.DataPos, h.Offset, from)
		return c.recover(h)
	}
	return c.rowsWalk(h, re)
}

// target words where a Partitions.db payload points.
func target(p bti.PartitionPayload) string {
	if p.InRowIndex() {
		return fmt.Sprintf("Rows.db byte %d", p.RowIndexPos())
	}
	return fmt.Sprintf("Data.db byte %d", p.DataPos())
}

// entry finds the Partitions.db entry of the partition h, whose key is
// c.bc: the one the walk in key order stands on, else the one a lookup of
// the key finds. Entries the walk passes on the way belong to no partition
// of Data.db and are reported. ok is false when there is none (reported).
func (c *btiCheck) entry(h *rows.PartitionHeader) (e bti.PartitionEntry, ok bool) {
	if c.it != nil {
		for ; c.ok; c.ok = c.it.Next() {
			e = c.it.Entry()
			if bytes.HasPrefix(c.bc, e.Prefix) || c.owns(e, h) {
				// The prefix lives in the iterator, which moves on now.
				c.prefix = append(c.prefix[:0], e.Prefix...)
				e.Prefix = c.prefix
				c.ok = c.it.Next()
				return e, true
			}
			if bytes.Compare(e.Prefix, c.bc) > 0 {
				break // a later partition's: this one's is missing
			}
			c.problem(c.path, format.ComponentPartitions, e.NodePos, "entry %x for a partition that Data.db does not hold", e.Prefix)
		}
		if err := c.it.Err(); err != nil {
			// A lookup finds each of the remaining entries, if it can.
			c.r.addErr(c.path, format.ComponentPartitions, err)
			c.it = nil
		}
	}
	l, found, err := c.s.Partitions().LookupBC(c.bc, bti.KeyHash(h.Key))
	switch {
	case err != nil:
		c.r.addErr(c.path, format.ComponentPartitions, err)
	case !found:
		c.problem(c.path, format.ComponentPartitions, l.NodePos, "no entry for the partition of key %x at Data.db byte %d: a lookup stops at this node", h.Key, h.Offset)
	default:
		if c.it != nil {
			c.problem(c.path, format.ComponentPartitions, l.NodePos, "the entry of key %x is found by a lookup but not by a walk in key order", h.Key)
		}
		// A lookup consumes the whole key or ends at a leaf: the stored
		// prefix is not known, only that it fits.
		l.Prefix = nil
		return l, true
	}
	return l, false
}

// owns reports whether the entry e, whose prefix does not fit, points at
// the partition h all the same (its prefix is what is damaged).
func (c *btiCheck) owns(e bti.PartitionEntry, h *rows.PartitionHeader) bool {
	if !e.InRowIndex() {
		return e.DataPos() == h.Offset
	}
	if c.s.Rows() == nil {
		return false
	}
	re, err := c.s.Rows().Entry(e.RowIndexPos())
	return err == nil && re.DataPos == h.Offset && bytes.Equal(re.Key, h.Key)
}

// recover is for a partition Partitions.db does not lead to (reported):
// its Rows.db entry, if it has one, follows the one before it, and is
// found by its key and Data.db position, so that its blocks are checked
// and the rebuild goes on (it then names the damaged Partitions.db byte).
// Searches are bounded by a few times Rows.db's size in all; past that,
// the rebuild stops and lost partitions' blocks go unchecked.
func (c *btiCheck) recover(h *rows.PartitionHeader) *rowsWalk {
	rf := c.s.RowsFile()
	if rf == nil || c.rowsFrom >= rf.Size() {
		return nil // nothing left in Rows.db: the partition has no entry
	}
	pat := bti.AppendRowIndexEntryHead(nil, h.Key, h.Offset)
	const window = 1 << 16
	buf := make([]byte, window+len(pat))
	for off := c.rowsFrom; off < rf.Size(); off += window {
		if c.searched > 2*rf.Size()+1<<20 {
			c.partsW = nil
			return nil
		}
		n, _ := rf.ReadAt(buf, off)
		c.searched += int64(n)
		for b, at := buf[:n], 0; ; {
			i := bytes.Index(b[at:], pat)
			if i < 0 {
				break
			}
			re, err := c.s.Rows().Entry(off + int64(at+i))
			if err == nil && bytes.Equal(re.Key, h.Key) && re.DataPos == h.Offset {
				return c.rowsWalk(h, re)
			}
			at += i + 1
		}
		if int64(n) < int64(len(buf)) {
			break
		}
	}
	return nil
}

// rowsWalk starts the check of the blocks of the Rows.db entry re, which
// names the partition h.
func (c *btiCheck) rowsWalk(h *rows.PartitionHeader, re bti.RowIndexEntry) *rowsWalk {
	c.rowsFrom = re.End
	if re.Deletion != h.Deletion {
		c.problem(c.rowsPath, format.ComponentRows, re.Pos, "partition deletion %+v, the partition header's is %+v", re.Deletion, h.Deletion)
	}
	blocks, end, err := c.s.Rows().Blocks(re)
	if err != nil {
		c.r.addErr(c.rowsPath, format.ComponentRows, err)
		return nil
	}
	return &rowsWalk{c: c, entry: re, blocks: blocks, end: end, partStart: h.Offset, open: deletiontime.Live}
}

func (c *btiCheck) finish(partitions int64) {
	if c.it != nil {
		for ; c.ok; c.ok = c.it.Next() {
			e := c.it.Entry()
			c.problem(c.path, format.ComponentPartitions, e.NodePos, "entry %x for a partition that Data.db does not hold", e.Prefix)
		}
		if err := c.it.Err(); err != nil {
			c.r.addErr(c.path, format.ComponentPartitions, err)
		}
	}
	if c.partsW != nil {
		if _, err := c.partsW.Finish(); err == nil {
			c.partsOut.finish(c.r)
		}
		if c.rowsW != nil && c.rowsW.Flush() == nil {
			c.rowsOut.finish(c.r)
		}
	}
	pi := c.s.Partitions()
	if pi.KeyCount != partitions {
		c.problem(c.path, format.ComponentPartitions, -1, "footer counts %d keys, Data.db holds %d partitions", pi.KeyCount, partitions)
	}
	if partitions > 0 && (!bytes.Equal(pi.FirstKey, c.first) || !bytes.Equal(pi.LastKey, c.last)) {
		c.problem(c.path, format.ComponentPartitions, pi.KeysPos, "first and last keys %x..%x, Data.db's are %x..%x", pi.FirstKey, pi.LastKey, c.first, c.last)
	}
}

// rowsWalk checks one partition's Rows.db blocks against its unfiltereds.
type rowsWalk struct {
	c         *btiCheck
	entry     bti.RowIndexEntry
	blocks    []bti.Block
	end       bti.Block
	next      int
	partStart int64
	prevBC    []byte // the previous unfiltered's clustering, byte-comparable
	bc        []byte
	open      deletiontime.DeletionTime // range deletion open after the previous unfiltered
	endRel    int64
	failed    bool
	built     []bti.IndexBlock // the blocks as the rows delimit them
}

func (w *rowsWalk) fail(off int64, format string, args ...any) {
	if !w.failed {
		w.c.problem(w.c.rowsPath, "Rows.db", off, "partition of key %x: "+format, append([]any{w.entry.Key}, args...)...)
	}
	w.failed = true
}

func (w *rowsWalk) unfiltered(u *rows.Unfiltered) {
	if u.Kind == rows.KindStaticRow || w.failed {
		return
	}
	rel := u.Offset - w.partStart
	kind, vals := clustering.Clustering, u.Clustering
	if u.Kind == rows.KindMarker {
		kind, vals = u.Bound.Kind, u.Bound.Values
	}
	var err error
	if w.bc, err = bytecomparable.AppendClustering(w.bc[:0], w.c.s.ClusteringTypes(), kind, vals); err != nil {
		w.fail(w.entry.Pos, "clustering at Data.db byte %d has no byte-comparable form: %v", u.Offset, err)
		return
	}
	if w.next < len(w.blocks) {
		b := w.blocks[w.next]
		switch {
		case b.Offset < rel:
			w.fail(b.NodePos, "block %d starts at partition offset %d, which is not where an unfiltered starts", w.next, b.Offset)
			return
		case b.Offset == rel:
			if bytes.Compare(b.Separator, w.bc) > 0 {
				w.fail(b.NodePos, "block %d separator %x is after its first clustering %x", w.next, b.Separator, w.bc)
			}
			if w.next > 0 && bytes.Compare(b.Separator, w.prevBC) <= 0 {
				w.fail(b.NodePos, "block %d separator %x is not after the previous block's last clustering %x", w.next, b.Separator, w.prevBC)
			}
			if b.HasOpenMarker != !w.open.IsLive() || b.HasOpenMarker && b.OpenDeletion != w.open {
				w.fail(b.NodePos, "block %d open deletion %+v (marked %v), the rows leave %+v open", w.next, b.OpenDeletion, b.HasOpenMarker, w.open)
			}
			w.built = append(w.built, bti.IndexBlock{First: append([]byte{}, w.bc...), Offset: rel, OpenDeletion: w.open})
			w.next++
		}
	}
	if u.Kind == rows.KindMarker {
		switch {
		case u.Bound.Kind.IsBoundary():
			w.open = u.StartDeletion
		case u.Bound.Kind.IsStart():
			w.open = u.Deletion
		default:
			w.open = deletiontime.Live
		}
	}
	w.prevBC = append(w.prevBC[:0], w.bc...)
	if n := len(w.built); n > 0 {
		w.built[n-1].Last = append(w.built[n-1].Last[:0], w.bc...)
	}
	w.endRel = u.Offset + u.Size - w.partStart
}

// sameBytes is an io.Writer that compares what is written with a file,
// remembering the first difference.
type sameBytes struct {
	f          reader.File
	path, comp string
	pos        int64
	diff       int64 // first differing byte, -1 while none
	buf        []byte
	differs    bool
}

func (w *sameBytes) Write(p []byte) (int, error) {
	if !w.differs {
		if int64(cap(w.buf)) < int64(len(p)) {
			w.buf = make([]byte, len(p))
		}
		b := w.buf[:len(p)]
		n, _ := w.f.ReadAt(b, w.pos)
		for i := 0; i < len(p); i++ {
			if i >= n || b[i] != p[i] {
				w.differs, w.diff = true, w.pos+int64(i)
				break
			}
		}
	}
	w.pos += int64(len(p))
	return len(p), nil
}

func (w *sameBytes) finish(r *Report) {
	switch {
	case w.differs:
		r.add(Problem{File: w.path, Component: w.comp, Offset: w.diff,
			Message: "differs from what Cassandra's trie writer produces for the partitions in Data.db (a node, pointer, payload or separator is damaged)"})
	case w.pos != w.f.Size():
		r.add(Problem{File: w.path, Component: w.comp, Offset: w.pos,
			Message: fmt.Sprintf("%d bytes more than Cassandra's trie writer produces for the partitions in Data.db", w.f.Size()-w.pos)})
	}
}

func (w *rowsWalk) finish() {
	if w.failed {
		return
	}
	switch {
	case w.next < len(w.blocks):
		w.fail(w.blocks[w.next].NodePos, "block %d starts at partition offset %d, past the last unfiltered", w.next, w.blocks[w.next].Offset)
	case w.end.Offset != w.endRel:
		w.fail(w.end.NodePos, "the closing entry says the unfiltereds end at partition offset %d, they end at %d", w.end.Offset, w.endRel)
	case bytes.Compare(w.end.Separator, w.prevBC) <= 0:
		w.fail(w.end.NodePos, "the closing separator %x is not after the last clustering %x", w.end.Separator, w.prevBC)
	}
}
