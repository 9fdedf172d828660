// Package index decodes and encodes Index.db of big-format sstables: one
// entry per partition (io/sstable/format/big/RowIndexEntry.java): the key
// with an unsigned short length, the partition's Data.db position as an
// unsigned vint, and the size of the promoted index (0 when the partition
// is small). A promoted index holds the partition header's length, its
// DeletionTime in the version's layout, and one IndexInfo per block of
// rows (io/sstable/IndexInfo.java: first and last clustering, offset from
// the partition start, width, optional end-open range tombstone marker),
// followed by each IndexInfo's offset within the promoted index as an int.
package index

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// widthBase is subtracted from every block width before it is written as a
// signed vint, so that blocks near the default 64 KiB are small.
const widthBase = 64 * 1024

// ErrShort means the bytes end inside an entry; a scanner then reads more.
var ErrShort = errors.New("index: bytes end inside an entry")

// Entry is one partition's Index.db entry.
type Entry struct {
	Key      []byte
	Position int64 // partition start in uncompressed Data.db
	// PromotedSize is the promoted index's serialized size (0 = not indexed).
	PromotedSize int
	// The rest is set only for indexed entries.
	HeaderLength int64 // partition header (+ static row) width in Data.db
	Deletion     deletiontime.DeletionTime
	Blocks       []Block
	Offsets      []uint32
}

// Indexed reports whether the entry has a promoted index.
func (e *Entry) Indexed() bool { return e.PromotedSize > 0 }

// Block is an IndexInfo: a run of rows of about column_index_size bytes.
type Block struct {
	FirstName, LastName clustering.Prefix
	Offset              int64 // from the partition start
	Width               int64
	EndOpenMarker       *deletiontime.DeletionTime
}

// Codec decodes and encodes entries of one sstable.
type Codec struct {
	Version format.Version
	// ClusteringFixed holds each clustering type's fixed width, -1 if variable.
	ClusteringFixed []int
}

func (c *Codec) layout() deletiontime.Layout { return c.Version.DeletionTimeLayout() }

// DecodeHead decodes the key, position and promoted index size of the entry
// at the start of b, and returns the offset of the promoted index and the
// entry's whole width. It is what a key-only scan needs.
func (c *Codec) DecodeHead(b []byte, e *Entry) (promotedAt, total int, err error) {
	if len(b) < 2 {
		return 0, 0, ErrShort
	}
	kl := int(binary.BigEndian.Uint16(b))
	p := 2
	if len(b) < p+kl {
		return 0, 0, ErrShort
	}
	e.Key = b[p : p+kl : p+kl]
	p += kl
	pos, n, err := vint.Unsigned(b[p:])
	if err != nil {
		return 0, 0, wrapShort(err, p, "partition position (vint)")
	}
	if pos > 1<<62 {
		return 0, 0, fieldErr(fmt.Errorf("%d", pos), p, "a partition position")
	}
	e.Position = int64(pos)
	p += n
	size, n, err := vint.Unsigned32(b[p:])
	if err != nil {
		return 0, 0, wrapShort(err, p, "promoted index size (vint)")
	}
	p += n
	e.PromotedSize = int(size)
	e.HeaderLength, e.Deletion, e.Blocks, e.Offsets = 0, deletiontime.Live, e.Blocks[:0], e.Offsets[:0]
	return p, p + int(size), nil
}

// Decode decodes a whole entry, promoted index included, from the start of
// b. Block prefixes alias b.
func (c *Codec) Decode(b []byte, e *Entry) (int, error) {
	p, total, err := c.DecodeHead(b, e)
	if err != nil {
		return 0, err
	}
	if len(b) < total {
		return 0, ErrShort
	}
	if e.PromotedSize == 0 {
		return total, nil
	}
	pb := b[:total]
	hl, n, err := vint.Unsigned(pb[p:])
	if err != nil {
		return 0, fieldErr(err, p, "partition header length (vint)")
	}
	e.HeaderLength = int64(hl)
	p += n
	dt, n, err := c.layout().Decode(pb[p:])
	if err != nil {
		return 0, fieldErr(err, p, "a "+c.layout().String()+" partition DeletionTime")
	}
	e.Deletion = dt
	p += n
	count, n, err := vint.Unsigned32(pb[p:])
	if err != nil {
		return 0, fieldErr(err, p, "index block count (vint)")
	}
	p += n
	// Each block takes at least 4 bytes of offsets plus a few of its own.
	if uint64(count)*5 > uint64(total-p) {
		return 0, fieldErr(fmt.Errorf("%d blocks in %d bytes", count, total-p), p, "a block count that fits the promoted index")
	}
	blocksStart := p
	for i := 0; i < int(count); i++ {
		var blk Block
		if p, err = c.decodeBlock(pb, p, &blk); err != nil {
			return 0, err
		}
		e.Blocks = append(e.Blocks, blk)
	}
	if total-p != 4*int(count) {
		return 0, fieldErr(fmt.Errorf("%d bytes left", total-p), p, fmt.Sprintf("%d block offsets (4 bytes each) to end the promoted index", count))
	}
	for i := 0; i < int(count); i++ {
		off := binary.BigEndian.Uint32(pb[p:])
		if int(off) > total-blocksStart {
			return 0, fieldErr(fmt.Errorf("%d", off), p, "a block offset inside the promoted index")
		}
		e.Offsets = append(e.Offsets, off)
		p += 4
	}
	return total, nil
}

func (c *Codec) decodeBlock(b []byte, p int, blk *Block) (int, error) {
	var err error
	var n int
	if blk.FirstName, n, err = clustering.DecodePrefix(nil, b[p:], c.ClusteringFixed); err != nil {
		return p, fieldErr(err, p, "an index block's first clustering")
	}
	p += n
	if blk.LastName, n, err = clustering.DecodePrefix(nil, b[p:], c.ClusteringFixed); err != nil {
		return p, fieldErr(err, p, "an index block's last clustering")
	}
	p += n
	off, n, err := vint.Unsigned(b[p:])
	if err != nil {
		return p, fieldErr(err, p, "an index block offset (vint)")
	}
	blk.Offset = int64(off)
	p += n
	w, n, err := vint.Signed(b[p:])
	if err != nil {
		return p, fieldErr(err, p, "an index block width (vint)")
	}
	blk.Width = w + widthBase
	p += n
	if p >= len(b) {
		return p, fieldErr(ErrShort, p, "the end-open-marker flag")
	}
	switch b[p] {
	case 0:
		p++
	case 1:
		p++
		dt, n, err := c.layout().Decode(b[p:])
		if err != nil {
			return p, fieldErr(err, p, "an end-open marker DeletionTime")
		}
		blk.EndOpenMarker = &dt
		p += n
	default:
		return p, fieldErr(fmt.Errorf("0x%02x", b[p]), p, "a boolean (0 or 1) end-open-marker flag")
	}
	return p, nil
}

// PromotedSize computes the promoted index size of e as the encoder will
// write it (0 when e has no blocks).
func (c *Codec) PromotedSize(e *Entry) (int, error) {
	if len(e.Blocks) == 0 {
		return 0, nil
	}
	n := vint.UnsignedSize(uint64(e.HeaderLength)) + c.layout().Size(e.Deletion) + vint.UnsignedSize(uint64(len(e.Blocks)))
	for i := range e.Blocks {
		n += c.blockSize(&e.Blocks[i])
	}
	return n + 4*len(e.Blocks), nil
}

func (c *Codec) blockSize(b *Block) int {
	n := clustering.PrefixSize(b.FirstName, c.ClusteringFixed) + clustering.PrefixSize(b.LastName, c.ClusteringFixed)
	n += vint.UnsignedSize(uint64(b.Offset)) + vint.SignedSize(b.Width-widthBase) + 1
	if b.EndOpenMarker != nil {
		n += c.layout().Size(*b.EndOpenMarker)
	}
	return n
}

// EntrySize is the width Append writes for e.
func (c *Codec) EntrySize(e *Entry) (int, error) {
	ps, err := c.PromotedSize(e)
	if err != nil {
		return 0, err
	}
	return 2 + len(e.Key) + vint.UnsignedSize(uint64(e.Position)) + vint.UnsignedSize(uint64(ps)) + ps, nil
}

// Append encodes e after dst. Block offsets are recomputed from the blocks,
// so a caller that changed a DeletionTime layout gets consistent offsets.
func (c *Codec) Append(dst []byte, e *Entry) ([]byte, error) {
	if len(e.Key) > 0xFFFF {
		return dst, fmt.Errorf("index: key of %d bytes exceeds 65535", len(e.Key))
	}
	ps, err := c.PromotedSize(e)
	if err != nil {
		return dst, err
	}
	dst = append(dst, byte(len(e.Key)>>8), byte(len(e.Key)))
	dst = append(dst, e.Key...)
	dst = vint.AppendUnsigned(dst, uint64(e.Position))
	dst = vint.AppendUnsigned(dst, uint64(ps))
	if ps == 0 {
		return dst, nil
	}
	dst = vint.AppendUnsigned(dst, uint64(e.HeaderLength))
	if dst, err = c.layout().Append(dst, e.Deletion); err != nil {
		return dst, err
	}
	dst = vint.AppendUnsigned(dst, uint64(len(e.Blocks)))
	start := len(dst)
	offsets := make([]uint32, len(e.Blocks))
	for i := range e.Blocks {
		b := &e.Blocks[i]
		offsets[i] = uint32(len(dst) - start)
		if dst, err = clustering.AppendPrefix(dst, b.FirstName, c.ClusteringFixed); err != nil {
			return dst, err
		}
		if dst, err = clustering.AppendPrefix(dst, b.LastName, c.ClusteringFixed); err != nil {
			return dst, err
		}
		dst = vint.AppendUnsigned(dst, uint64(b.Offset))
		dst = vint.AppendSigned(dst, b.Width-widthBase)
		if b.EndOpenMarker == nil {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 1)
			if dst, err = c.layout().Append(dst, *b.EndOpenMarker); err != nil {
				return dst, err
			}
		}
	}
	for _, o := range offsets {
		dst = binary.BigEndian.AppendUint32(dst, o)
	}
	return dst, nil
}

func wrapShort(err error, p int, what string) error {
	if errors.Is(err, vint.ErrShort) {
		return ErrShort
	}
	return fieldErr(err, p, what)
}

// fieldErr reports a field of an entry decoded from a bare buffer: the
// offset is relative to the entry's start, which only the caller knows
// (the scanner places it with corrupt.Place).
func fieldErr(err error, p int, what string) error {
	return corrupt.New("", "Index.db", int64(p), what, err)
}

// BlockSize is the width Append gives block b, so a verifier can check the
// offsets table that ends a promoted index (each block's offset is the sum
// of the widths before it).
func (c *Codec) BlockSize(b *Block) int { return c.blockSize(b) }
