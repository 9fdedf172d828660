package bti

import (
	"encoding/binary"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/vint"
	"github.com/sstabletool/sstabletool/reader"
)

// flagOpenMarker is the row index payload bit saying a DeletionTime open
// at the block's start follows the offset (RowIndexReader.FLAG_OPEN_MARKER).
const flagOpenMarker = 8

// RowIndexEntry is the Rows.db entry of one partition (TrieIndexEntry),
// which Partitions.db points at. It follows the partition's row index trie.
type RowIndexEntry struct {
	Pos        int64  // position of the entry in Rows.db (its key length)
	Key        []byte // the partition key
	DataPos    int64  // position of the partition in Data.db
	Root       int64  // position of the row index trie's root
	BlockCount int    // number of index blocks
	Deletion   deletiontime.DeletionTime
	End        int64 // position just after the entry
}

// Block is one entry of a partition's row index trie.
type Block struct {
	// Separator is the trie key: a byte-comparable string greater than
	// every clustering of the block before and at most the block's first
	// clustering (empty for the first block). For the closing entry it is
	// greater than the partition's last clustering.
	Separator []byte
	// Offset is where the block's first unfiltered starts, from the start
	// of the partition in Data.db (for the closing entry: where the
	// partition's unfiltereds end, before the end-of-partition byte).
	Offset int64
	// OpenDeletion is the range deletion open at the block's start
	// (HasOpenMarker), or Live.
	OpenDeletion  deletiontime.DeletionTime
	HasOpenMarker bool
	// NodePos is the trie node holding the payload.
	NodePos int64
}

// RowIndex is an opened Rows.db.
type RowIndex struct {
	src    trie.Source
	path   string
	layout deletiontime.Layout
	size   int64
}

// OpenRows opens a Rows.db held by src (path names it in errors) of
// sstable version v (which fixes the DeletionTime layout).
func OpenRows(src trie.Source, path string, v format.Version) *RowIndex {
	return &RowIndex{src: src, path: path, layout: v.DeletionTimeLayout(), size: src.Size()}
}

// OpenRowsFile opens a Rows.db opened with reader.Open.
func OpenRowsFile(f reader.File, v format.Version) *RowIndex {
	return OpenRows(trie.NewFileSource(f), f.Path(), v)
}

func (ri *RowIndex) corrupt(off int64, expected string, err error) error {
	return corrupt.New(ri.path, format.ComponentRows, off, expected, err)
}

// maxEntrySize bounds an entry: key, three vints, a DeletionTime.
const maxEntrySize = 2 + 0xFFFF + 9 + 9 + 5 + deletiontime.LegacySize

// Entry reads the entry at pos, a position Partitions.db gave.
func (ri *RowIndex) Entry(pos int64) (RowIndexEntry, error) {
	e := RowIndexEntry{Pos: pos}
	if pos < 0 || pos+2 > ri.size {
		return e, ri.corrupt(pos, "a row index entry inside the "+strconv.FormatInt(ri.size, 10)+"-byte file", nil)
	}
	b, err := ri.src.Window(pos, maxEntrySize)
	if err != nil {
		return e, ri.corrupt(pos, "a readable row index entry", err)
	}
	if len(b) > maxEntrySize {
		b = b[:maxEntrySize]
	}
	klen := int(binary.BigEndian.Uint16(b))
	if 2+klen > len(b) {
		return e, ri.corrupt(pos, "a partition key of "+strconv.Itoa(klen)+" bytes inside the file", nil)
	}
	e.Key = append([]byte{}, b[2:2+klen]...)
	off := 2 + klen
	base := pos + int64(off)
	dataPos, n, err := vint.Unsigned(b[off:])
	if err != nil || dataPos > 1<<62 {
		return e, ri.corrupt(pos+int64(off), "the partition's Data.db position (unsigned vint)", err)
	}
	e.DataPos = int64(dataPos)
	off += n
	delta, n, err := vint.Signed(b[off:])
	if err != nil {
		return e, ri.corrupt(pos+int64(off), "the row index root (vint distance from the entry)", err)
	}
	e.Root = base + delta
	if e.Root < 0 || e.Root >= pos {
		return e, ri.corrupt(pos+int64(off), "a row index root before the entry at "+strconv.FormatInt(pos, 10)+", found "+strconv.FormatInt(e.Root, 10), nil)
	}
	off += n
	count, n, err := vint.Unsigned32(b[off:])
	if err != nil {
		return e, ri.corrupt(pos+int64(off), "the block count (unsigned vint)", err)
	}
	if count == 0 || count > uint32(e.Root)+1 {
		return e, ri.corrupt(pos+int64(off), "a block count between 1 and the trie's size, found "+strconv.FormatUint(uint64(count), 10), nil)
	}
	e.BlockCount = int(count)
	off += n
	dt, n, err := ri.layout.Decode(b[off:])
	if err != nil {
		return e, ri.corrupt(pos+int64(off), "the partition DeletionTime ("+ri.layout.String()+")", err)
	}
	e.Deletion = dt
	e.End = pos + int64(off+n)
	return e, nil
}

// decodeRowPayload reads a row index payload: an offset of bits&7 bytes,
// then a DeletionTime when bit 8 is set (RowIndexReader.readPayload).
func decodeRowPayload(n *trie.Node, layout deletiontime.Layout) (Block, int, error) {
	bits := int(n.Flags)
	size := bits & 7
	b := n.Payload()
	if len(b) < size {
		return Block{}, 0, corrupt.New("", "", n.PayloadPos(), strconv.Itoa(size)+" bytes of block offset", nil)
	}
	blk := Block{Offset: sizedInt(b[:size]), OpenDeletion: deletiontime.Live, NodePos: n.Pos}
	if bits&flagOpenMarker != 0 {
		dt, m, err := layout.Decode(b[size:])
		if err != nil {
			return Block{}, 0, corrupt.New("", "", n.PayloadPos()+int64(size), "the DeletionTime open at the block's start", err)
		}
		blk.OpenDeletion, blk.HasOpenMarker = dt, true
		size += m
	}
	return blk, size, nil
}

// Trie returns a reader of the row index trie of an entry.
func (ri *RowIndex) Trie(e RowIndexEntry) (*trie.Reader, error) {
	return trie.NewReader(ri.src, e.Root, ri.path, format.ComponentRows)
}

func (ri *RowIndex) own(err error) error {
	return corrupt.Place(err, ri.path, format.ComponentRows, 0)
}

// Blocks lists a partition's index blocks in order, and the closing entry
// (a separator after the last clustering, at the offset where the
// partition's unfiltereds end). It checks that there are BlockCount blocks
// with increasing offsets and a closing entry without a deletion.
func (ri *RowIndex) Blocks(e RowIndexEntry) (blocks []Block, end Block, err error) {
	tr, err := ri.Trie(e)
	if err != nil {
		return nil, Block{}, err
	}
	it := tr.NewIterator()
	var all []Block
	for ok := it.First(); ok; ok = it.Next() {
		if len(all) > e.BlockCount {
			return nil, Block{}, ri.corrupt(it.Node().Pos, strconv.Itoa(e.BlockCount)+" blocks and a closing entry in the row index of the entry at "+strconv.FormatInt(e.Pos, 10), nil)
		}
		n := it.Node()
		b, _, err := decodeRowPayload(&n, ri.layout)
		if err != nil {
			return nil, Block{}, ri.own(err)
		}
		b.Separator = append([]byte{}, it.Key()...)
		if len(all) > 0 && b.Offset <= all[len(all)-1].Offset {
			return nil, Block{}, ri.corrupt(n.PayloadPos(), "block offsets increasing within the partition (after "+strconv.FormatInt(all[len(all)-1].Offset, 10)+"), found "+strconv.FormatInt(b.Offset, 10), nil)
		}
		all = append(all, b)
	}
	if err := it.Err(); err != nil {
		return nil, Block{}, err
	}
	if len(all) != e.BlockCount+1 {
		return nil, Block{}, ri.corrupt(e.Root, strconv.Itoa(e.BlockCount)+" blocks and a closing entry in the row index of the entry at "+strconv.FormatInt(e.Pos, 10)+", found "+strconv.Itoa(len(all))+" entries", nil)
	}
	if len(all[0].Separator) != 0 {
		return nil, Block{}, ri.corrupt(all[0].NodePos, "the first block at the empty separator (the root)", nil)
	}
	end = all[len(all)-1]
	if end.HasOpenMarker {
		return nil, Block{}, ri.corrupt(end.NodePos, "no deletion on the closing entry of a row index", nil)
	}
	return all[:e.BlockCount], end, nil
}

// Floor finds the block where a search for a clustering starts: the entry
// with the greatest separator at most bc, the byte-comparable form of the
// clustering or bound (RowIndexReader.separatorFloor). closing is true when
// that is the closing entry (bc is after the partition's last clustering).
func (ri *RowIndex) Floor(e RowIndexEntry, bc []byte) (b Block, closing bool, err error) {
	tr, err := ri.Trie(e)
	if err != nil {
		return Block{}, false, err
	}
	ent, ok, err := tr.Floor(bc)
	if err != nil {
		return Block{}, false, err
	}
	if !ok {
		return Block{}, false, ri.corrupt(e.Root, "a row index whose first separator is empty (every key has a floor)", nil)
	}
	b, _, err = decodeRowPayload(&ent.Node, ri.layout)
	if err != nil {
		return Block{}, false, ri.own(err)
	}
	b.Separator = ent.Key
	last, ok, err := tr.Last()
	if err != nil || !ok {
		return b, false, err
	}
	return b, last.Node.Pos == ent.Node.Pos, nil
}

// Stats describes the trie of one entry.
func (ri *RowIndex) Stats(e RowIndexEntry) (trie.Stats, error) {
	tr, err := ri.Trie(e)
	if err != nil {
		return trie.Stats{}, err
	}
	return tr.Stats(func(n *trie.Node) (int, error) {
		_, size, err := decodeRowPayload(n, ri.layout)
		return size, err
	})
}
