package bti

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// IndexBlock is one row index block of a partition, as the partition
// writer closes it.
type IndexBlock struct {
	// First and Last are the byte-comparable forms (bytecomparable.
	// AppendClustering) of the clusterings of the block's first and last
	// unfiltered (row, or range tombstone bound or boundary).
	First, Last []byte
	// Offset is where the block's first unfiltered starts, from the start
	// of the partition (its key length) in Data.db.
	Offset int64
	// OpenDeletion is the range deletion open before the block's first
	// unfiltered, or deletiontime.Live.
	OpenDeletion deletiontime.DeletionTime
}

type rowPayload struct {
	offset int64
	open   deletiontime.DeletionTime
}

type rowCodec struct{ layout deletiontime.Layout }

func (c rowCodec) Size(p rowPayload) int {
	n := sizedIntSize(p.offset)
	if !p.open.IsLive() {
		n += c.layout.Size(p.open)
	}
	return n
}

func (c rowCodec) Flags(p rowPayload) uint8 {
	f := uint8(sizedIntSize(p.offset))
	if !p.open.IsLive() {
		f |= flagOpenMarker
	}
	return f
}

func (c rowCodec) Append(dst []byte, p rowPayload) []byte {
	dst = appendSizedInt(dst, p.offset, sizedIntSize(p.offset))
	if !p.open.IsLive() {
		// Open markers are checked by AddPartition before they get here.
		dst, _ = c.layout.Append(dst, p.open)
	}
	return dst
}

// RowsWriter writes Rows.db: for each partition with more than one index
// block, its row index trie (RowIndexWriter) followed by its key and
// TrieIndexEntry, as BtiTableWriter.IndexWriter.append does.
type RowsWriter struct {
	out    *trie.Output
	tw     *trie.Writer[rowPayload]
	layout deletiontime.Layout
	buf    []byte
}

// NewRowsWriter writes Rows.db of sstable version v to w from its start.
func NewRowsWriter(w io.Writer, v format.Version) *RowsWriter {
	out := trie.NewOutput(w, 0)
	layout := v.DeletionTimeLayout()
	return &RowsWriter{out: out, layout: layout, tw: trie.NewWriter[rowPayload](out, rowCodec{layout: layout})}
}

// Flush writes out what is buffered.
func (w *RowsWriter) Flush() error { return w.out.Flush() }

// AddPartition writes a partition's row index and entry and returns the
// entry's position, which goes into Partitions.db (PartitionsWriter.
// AddRowIndex). blocks are the partition's index blocks in order (at least
// two: Cassandra writes no row index for one), end is where its
// unfiltereds end (before the end-of-partition byte), relative to its
// start like the block offsets.
func (w *RowsWriter) AddPartition(key []byte, dataPos int64, deletion deletiontime.DeletionTime, blocks []IndexBlock, end int64) (int64, error) {
	if len(blocks) < 2 {
		return -1, fmt.Errorf("bti: a row index needs at least two blocks, got %d", len(blocks))
	}
	if len(key) > 0xFFFF {
		return -1, fmt.Errorf("bti: partition key of %d bytes", len(key))
	}
	w.tw.Reset()
	var prevMax, prevSep []byte
	for i, b := range blocks {
		if !b.OpenDeletion.IsLive() {
			if err := w.layout.Check(b.OpenDeletion); err != nil {
				return -1, fmt.Errorf("bti: block %d open deletion: %w", i, err)
			}
		}
		var sep []byte
		if i > 0 {
			var err error
			if sep, err = separatorGt(prevMax, b.First); err != nil {
				return -1, fmt.Errorf("bti: block %d: %w", i, err)
			}
		}
		if err := w.tw.Add(sep, rowPayload{offset: b.Offset, open: b.OpenDeletion}); err != nil {
			return -1, fmt.Errorf("bti: block %d: %w", i, err)
		}
		prevSep, prevMax = sep, b.Last
	}
	// A closing entry after the last block, as long as the last separator
	// and just above the last clustering, so that greater keys are
	// rejected quickly (RowIndexWriter.complete).
	i := 0
	for i < len(prevMax) && i < len(prevSep) && prevMax[i] == prevSep[i] {
		i++
	}
	if i == len(prevMax) {
		return -1, fmt.Errorf("bti: last clustering %x is a prefix of the last separator %x", prevMax, prevSep)
	}
	if err := w.tw.Add(nudge(prevMax, i), rowPayload{offset: end, open: deletiontime.Live}); err != nil {
		return -1, fmt.Errorf("bti: closing entry: %w", err)
	}
	root, err := w.tw.Complete()
	if err != nil {
		return -1, err
	}
	pos := w.out.Pos()
	b := AppendRowIndexEntryHead(w.buf[:0], key, dataPos)
	base := pos + 2 + int64(len(key))
	b = vint.AppendSigned(b, root-base)
	b = vint.AppendUnsigned(b, uint64(len(blocks)))
	if b, err = w.layout.Append(b, deletion); err != nil {
		return -1, fmt.Errorf("bti: partition deletion: %w", err)
	}
	w.buf = b
	if _, err := w.out.Write(b); err != nil {
		return -1, err
	}
	return pos, nil
}

// separatorGt returns the separator Cassandra puts between two blocks
// (ByteSource.separatorGt): the common prefix of the previous block's last
// clustering and the next block's first, then the previous one's next
// byte plus one.
func separatorGt(prev, next []byte) ([]byte, error) {
	out := make([]byte, 0, min(len(prev), len(next))+1)
	for k := 0; ; k++ {
		p, c := at(prev, k), at(next, k)
		if p == c {
			if p < 0 {
				return nil, fmt.Errorf("bti: block boundary between equal clusterings %x", prev)
			}
			out = append(out, byte(p))
			continue
		}
		if p > c {
			return nil, fmt.Errorf("bti: clustering %x of a block does not sort after %x of the previous block", next, prev)
		}
		return append(out, byte(p+1)), nil
	}
}

func at(b []byte, k int) int {
	if k < len(b) {
		return int(b[k])
	}
	return -1
}

// nudge returns a string just above v that is at least n+1 bytes long
// (RowIndexWriter.nudge): v's first n bytes, then its byte n plus one, or,
// where that byte is 0xFF, the 0xFF and the next byte nudged instead (a
// byte past v's end counts as -1 and becomes 0).
func nudge(v []byte, n int) []byte {
	var out []byte
	k := 0
	for cur := 0; cur <= n; {
		b := at(v, k)
		k++
		if cur == n {
			if b == 0xFF {
				out = append(out, 0xFF)
				continue
			}
			b++
		}
		if b < 0 {
			break
		}
		out = append(out, byte(b))
		cur++
	}
	return out
}

// AppendRowIndexEntryHead appends how a Rows.db entry starts: the key with
// its unsigned short length, then the partition's Data.db position as a
// vint (what a search for a partition's entry looks for, in verify).
func AppendRowIndexEntryHead(dst, key []byte, dataPos int64) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(key)))
	dst = append(dst, key...)
	return vint.AppendUnsigned(dst, uint64(dataPos))
}
