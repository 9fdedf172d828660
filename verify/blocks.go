package verify

import (
	"bytes"
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// blockWalk compares a partition's promoted index (its IndexInfo blocks)
// with the unfiltereds Data.db holds, as the partition writer builds it
// (BigFormatPartitionWriter): the first block starts at the first
// unfiltered after the header and static row, each further block starts
// where the previous one ends, each ends at an unfiltered's start except
// the last, which ends at the partition's end (end-of-partition byte
// included, unless the last unfiltered closed the block); a block's first and last names are the clusterings (or bounds)
// of the first and last unfiltered it covers, and its end-open marker is
// the deletion of the range tombstone left open after its last unfiltered.
// Readers seek to a block's offset when they look for a clustering: a block
// whose name or offset is off sends them to the wrong rows, silently.
//
// The walk streams: it keeps only the previous unfiltered's clustering.
type blockWalk struct {
	r        *Report
	file     string
	entryPos int64 // Index.db offset of the entry
	blocksAt int64 // Index.db offset of the first block
	e        *index.Entry

	cur      int  // block the next unfiltered belongs to
	inBlock  bool // cur's first unfiltered was seen
	bad      bool // one problem per entry: the rest would only echo it
	first    bool // no non-static unfiltered seen yet
	open     deletiontime.DeletionTime
	isOpen   bool
	last     clustering.Prefix
	lastBuf  []byte
	lastRel  int64
	startRel int64
	// The bounds on column_index_size the blocks imply: a block closes at
	// the first unfiltered that takes it to that size, so every block is
	// at least that wide and was narrower before its last unfiltered.
	minSize, maxSize int64
}

// newBlockWalk starts the walk of the partition whose indexed entry e was
// read from raw (the entry's bytes in Index.db, at entryPos).
func newBlockWalk(r *Report, file string, codec *index.Codec, e *index.Entry, entryPos int64, raw []byte, scratch *[]byte) *blockWalk {
	w := &blockWalk{r: r, file: file, e: e, entryPos: entryPos, first: true, minSize: 1, maxSize: 1 << 62}
	at := 2 + len(e.Key) + vint.UnsignedSize(uint64(e.Position)) + vint.UnsignedSize(uint64(e.PromotedSize)) +
		vint.UnsignedSize(uint64(e.HeaderLength)) + codec.Version.DeletionTimeLayout().Size(e.Deletion) +
		vint.UnsignedSize(uint64(len(e.Blocks)))
	w.blocksAt = entryPos + int64(at)
	// The offsets table after the blocks: block i starts where the widths
	// of blocks 0..i-1 end. Readers binary-search blocks through it.
	var want int64
	for i := range e.Blocks {
		if i < len(e.Offsets) && int64(e.Offsets[i]) != want {
			w.problem(i, fmt.Sprintf("the promoted index's offsets table says block %d is at byte %d of the blocks, it is at %d", i, e.Offsets[i], want))
			break
		}
		want += int64(codec.BlockSize(&e.Blocks[i]))
	}
	if w.bad {
		return w
	}
	// What decodes the same must be written the same: Cassandra writes
	// one encoding of each entry, so other bytes (bits set for clustering
	// columns a prefix does not have, vints longer than needed) are damage
	// even where readers would ignore them.
	canon, err := codec.Append((*scratch)[:0], e)
	*scratch = canon
	if err != nil {
		w.problem(-1, fmt.Sprintf("cannot be re-encoded: %v", err))
		return w
	}
	if !bytes.Equal(canon, raw) {
		i := 0
		for i < len(canon) && i < len(raw) && canon[i] == raw[i] {
			i++
		}
		msg := fmt.Sprintf("entry of %d bytes, its canonical encoding has %d", len(raw), len(canon))
		if i < len(canon) && i < len(raw) {
			msg = fmt.Sprintf("byte 0x%02x where the canonical encoding of what the entry decodes to has 0x%02x", raw[i], canon[i])
		}
		w.bad = true
		w.r.add(Problem{File: w.file, Component: "Index.db", Offset: entryPos + int64(i),
			Message: fmt.Sprintf("promoted index of key %x: %s", e.Key, msg)})
	}
	return w
}

// blockPos is the Index.db offset of block i, for problem reports.
func (w *blockWalk) blockPos(i int) int64 {
	if i >= 0 && i < len(w.e.Offsets) {
		return w.blocksAt + int64(w.e.Offsets[i])
	}
	return w.entryPos
}

func (w *blockWalk) problem(block int, msg string) {
	w.bad = true
	w.r.add(Problem{File: w.file, Component: "Index.db", Offset: w.blockPos(block),
		Message: fmt.Sprintf("promoted index of key %x: %s", w.e.Key, msg)})
}

func (w *blockWalk) end(i int) int64 { b := &w.e.Blocks[i]; return b.Offset + b.Width }

// unfiltered takes the next unfiltered of the partition; rel is its offset
// from the partition start.
func (w *blockWalk) unfiltered(u *rows.Unfiltered, rel int64) {
	if u.Kind == rows.KindStaticRow || w.bad {
		return
	}
	blocks := w.e.Blocks
	if w.first {
		w.first = false
		if w.e.HeaderLength != rel {
			w.problem(-1, fmt.Sprintf("header length %d, but the first row or marker starts at partition byte %d", w.e.HeaderLength, rel))
			return
		}
	}
	if w.inBlock {
		switch e := w.end(w.cur); {
		case rel == e:
			w.close(true)
			if w.bad {
				return
			}
		case rel > e:
			w.problem(w.cur, fmt.Sprintf("block %d ends at partition byte %d (offset %d + width %d), inside the unfiltered at %d..%d",
				w.cur, e, blocks[w.cur].Offset, blocks[w.cur].Width, w.lastRel, rel))
			return
		}
	}
	if !w.inBlock {
		if w.cur >= len(blocks) {
			w.problem(len(blocks)-1, fmt.Sprintf("the unfiltered at partition byte %d lies past the last of %d blocks", rel, len(blocks)))
			return
		}
		b := &blocks[w.cur]
		if b.Offset != rel {
			w.problem(w.cur, fmt.Sprintf("block %d starts at partition byte %d, but the next row or marker starts at %d", w.cur, b.Offset, rel))
			return
		}
		if !samePrefix(b.FirstName, u) {
			w.problem(w.cur, fmt.Sprintf("block %d's first name %s, but its first unfiltered (partition byte %d) is %s",
				w.cur, fmtPrefix(b.FirstName), rel, fmtUnfiltered(u)))
			return
		}
		w.inBlock, w.startRel = true, rel
	}
	w.keep(u, rel)
}

// finish takes the partition's end: rel of the byte after end-of-partition.
func (w *blockWalk) finish(partEnd int64) {
	if w.bad {
		return
	}
	blocks := w.e.Blocks
	if !w.inBlock {
		if w.cur < len(blocks) {
			w.problem(w.cur, fmt.Sprintf("block %d of %d starts past the partition's last row or marker", w.cur, len(blocks)))
		}
		return
	}
	// The last block ends after the end-of-partition byte, unless the last
	// unfiltered itself filled the block to column_index_size: then the
	// block was closed before that byte was written.
	if e := w.end(w.cur); e != partEnd && e != partEnd-1 {
		w.problem(w.cur, fmt.Sprintf("the last block %d ends at partition byte %d (offset %d + width %d), the partition ends at %d (end-of-partition byte at %d)",
			w.cur, e, blocks[w.cur].Offset, blocks[w.cur].Width, partEnd, partEnd-1))
		return
	}
	last := w.cur
	w.close(w.end(w.cur) == partEnd-1)
	if w.bad {
		return
	}
	if w.cur < len(blocks) {
		w.problem(w.cur, fmt.Sprintf("%d block(s) lie past the partition's end", len(blocks)-w.cur))
		return
	}
	if w.minSize > w.maxSize {
		w.problem(last, fmt.Sprintf("the block widths fit no column_index_size: blocks close at the first row or marker that takes them to that size, so it would be at least %d and at most %d bytes",
			w.minSize, w.maxSize))
	}
}

// close checks the current block's last name and end-open marker against
// the unfiltered before its end. filled says the block was closed right
// after its last unfiltered (it reached column_index_size), not by the end
// of the partition.
func (w *blockWalk) close(filled bool) {
	b := &w.e.Blocks[w.cur]
	w.minSize = max(w.minSize, w.lastRel-b.Offset+1)
	if filled {
		w.maxSize = min(w.maxSize, b.Width)
	} else {
		// Closed by the partition's end: even with its last unfiltered
		// (all but the end-of-partition byte) it stayed below the size.
		w.minSize = max(w.minSize, b.Width)
	}
	if !equalPrefix(b.LastName, w.last) {
		w.problem(w.cur, fmt.Sprintf("block %d's last name %s, but its last unfiltered (partition byte %d) is %s",
			w.cur, fmtPrefix(b.LastName), w.lastRel, fmtPrefix(w.last)))
		return
	}
	switch {
	case b.EndOpenMarker == nil && w.isOpen:
		w.problem(w.cur, fmt.Sprintf("block %d has no end-open marker, but a range tombstone %+v is open at its end", w.cur, w.open))
		return
	case b.EndOpenMarker != nil && !w.isOpen:
		w.problem(w.cur, fmt.Sprintf("block %d has end-open marker %+v, but no range tombstone is open at its end", w.cur, *b.EndOpenMarker))
		return
	case b.EndOpenMarker != nil && *b.EndOpenMarker != w.open:
		w.problem(w.cur, fmt.Sprintf("block %d's end-open marker %+v, the open range tombstone's deletion %+v", w.cur, *b.EndOpenMarker, w.open))
		return
	}
	w.cur++
	w.inBlock = false
}

// keep remembers u's clustering (the decoder reuses its buffers) and the
// range tombstone state after it.
func (w *blockWalk) keep(u *rows.Unfiltered, rel int64) {
	w.lastRel = rel
	vals := u.Clustering
	w.last.Kind = clustering.Clustering
	if u.Kind == rows.KindMarker {
		vals = u.Bound.Values
		w.last.Kind = u.Bound.Kind
		switch {
		case u.Bound.Kind.IsBoundary():
			w.open, w.isOpen = u.StartDeletion, true
		case u.Bound.Kind.IsStart():
			w.open, w.isOpen = u.Deletion, true
		default:
			w.isOpen = false
		}
	}
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	if cap(w.lastBuf) < n {
		w.lastBuf = make([]byte, 0, n)
	}
	w.lastBuf = w.lastBuf[:0]
	w.last.Values = w.last.Values[:0]
	for _, v := range vals {
		if v == nil {
			w.last.Values = append(w.last.Values, nil)
			continue
		}
		s := len(w.lastBuf)
		w.lastBuf = append(w.lastBuf, v...)
		w.last.Values = append(w.last.Values, w.lastBuf[s:len(w.lastBuf):len(w.lastBuf)])
	}
}

func samePrefix(p clustering.Prefix, u *rows.Unfiltered) bool {
	if u.Kind == rows.KindMarker {
		return equalPrefix(p, u.Bound)
	}
	return equalPrefix(p, clustering.Prefix{Kind: clustering.Clustering, Values: u.Clustering})
}

// equalPrefix compares kind and values, null (nil) apart from empty.
func equalPrefix(a, b clustering.Prefix) bool {
	if a.Kind != b.Kind || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		if (a.Values[i] == nil) != (b.Values[i] == nil) || !bytes.Equal(a.Values[i], b.Values[i]) {
			return false
		}
	}
	return true
}

func fmtUnfiltered(u *rows.Unfiltered) string {
	if u.Kind == rows.KindMarker {
		return fmtPrefix(u.Bound)
	}
	return fmtPrefix(clustering.Prefix{Kind: clustering.Clustering, Values: u.Clustering})
}

func fmtPrefix(p clustering.Prefix) string {
	var b bytes.Buffer
	b.WriteString(p.Kind.String())
	b.WriteByte('(')
	for i, v := range p.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		if v == nil {
			b.WriteString("null")
		} else {
			fmt.Fprintf(&b, "%x", v)
		}
	}
	b.WriteByte(')')
	return b.String()
}
