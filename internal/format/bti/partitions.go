// Package bti reads and writes the two index components of Cassandra 5.0's
// trie-indexed sstable format (BtiFormat, version da) byte for byte:
//
//   - Partitions.db (PartitionIndex): one trie over the byte-comparable
//     form of every partition key, cut to the shortest prefix that tells
//     it from its neighbours, mapping it to the partition's position in
//     Data.db, or to its row index in Rows.db, plus a byte of the key's
//     hash; a footer holds the first and last keys, the key count and the
//     root position.
//   - Rows.db (RowIndexReader/Writer, TrieIndexEntry): for each partition
//     with more than one index block, a trie over separators between the
//     blocks' clusterings mapping to each block's offset in the partition
//     (and the deletion open at its start), followed by the partition key
//     and an entry with the partition's Data.db position, the trie's root,
//     the block count and the partition deletion.
//
// The tries themselves are package trie; keys are package bytecomparable.
package bti

import (
	"encoding/binary"
	"strconv"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/internal/format/murmur"
	"github.com/sstabletool/sstabletool/reader"
)

// PartitionsFooterSize is the three longs at the end of Partitions.db.
const PartitionsFooterSize = 24

// flagHasHash is the payload bit saying a hash byte precedes the position.
const flagHasHash = 8

// PartitionPayload is what Partitions.db maps a key prefix to.
type PartitionPayload struct {
	// Pos is the stored position: >= 0 is the partition's entry in
	// Rows.db, < 0 is ^(its position in Data.db).
	Pos int64
	// Hash is the low byte of the key's Murmur3 filter hash (HasHash is
	// always true in files Cassandra writes).
	Hash    byte
	HasHash bool
}

// InRowIndex reports whether the partition has a Rows.db entry.
func (p PartitionPayload) InRowIndex() bool { return p.Pos >= 0 }

// RowIndexPos is the partition's entry in Rows.db (valid when InRowIndex).
func (p PartitionPayload) RowIndexPos() int64 { return p.Pos }

// DataPos is the partition's position in Data.db (valid when !InRowIndex;
// otherwise the Rows.db entry holds it).
func (p PartitionPayload) DataPos() int64 { return ^p.Pos }

// KeyHash is the hash byte Partitions.db stores for a partition key: the
// low byte of the second half of its Murmur3 hash, the one Filter.db uses
// (IFilter.FilterKey.filterHashLowerBits).
func KeyHash(key []byte) byte {
	_, h2 := murmur.Hash128(key, 0)
	return byte(h2)
}

// sizedInt reads a big-endian signed integer of n bytes (SizedInts.read).
func sizedInt(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	v := int64(int8(b[0]))
	for _, c := range b[1:] {
		v = v<<8 | int64(c)
	}
	return v
}

// sizedIntSize is the bytes needed for v with its sign (SizedInts.nonZeroSize).
func sizedIntSize(v int64) int {
	if v < 0 {
		v = ^v
	}
	n := 1
	for v >= 0x80 {
		v >>= 8
		n++
	}
	return n
}

func appendSizedInt(dst []byte, v int64, n int) []byte {
	for s := (n - 1) * 8; s >= 0; s -= 8 {
		dst = append(dst, byte(v>>uint(s)))
	}
	return dst
}

// decodePartitionPayload reads the payload after a Partitions.db node: for
// payload bits 1..7 a position of that many bytes, for 8..15 a hash byte
// and a position of bits-7 bytes (PartitionIndex.getIndexPos).
func decodePartitionPayload(n *trie.Node) (PartitionPayload, int, error) {
	flags := int(n.Flags)
	b := n.Payload()
	var p PartitionPayload
	size := flags
	if flags >= flagHasHash {
		size = flags - flagHasHash + 2
	}
	if len(b) < size {
		return p, 0, corrupt.New("", "", n.PayloadPos(), strconv.Itoa(size)+" bytes of partition index payload (bits "+strconv.Itoa(flags)+")", nil)
	}
	if flags >= flagHasHash {
		p.Hash, p.HasHash = b[0], true
		b = b[1:size]
	} else {
		b = b[:size]
	}
	p.Pos = sizedInt(b)
	return p, size, nil
}

// PartitionIndex is an opened Partitions.db.
type PartitionIndex struct {
	trie        *trie.Reader
	partitioner token.Partitioner

	// Root is the position of the trie's root node.
	Root int64
	// KeyCount is the number of partitions.
	KeyCount int64
	// KeysPos is where the first and last keys are stored (the end of the
	// trie).
	KeysPos int64
	// FirstKey and LastKey are the smallest and greatest partition keys.
	FirstKey, LastKey []byte
}

// OpenPartitions reads the footer of a Partitions.db held by src; path
// names the file in errors. The partitioner orders the keys.
func OpenPartitions(src trie.Source, path string, p token.Partitioner) (*PartitionIndex, error) {
	size := src.Size()
	corrupt := func(off int64, expected string, err error) error {
		return corrupt.New(path, format.ComponentPartitions, off, expected, err)
	}
	if size < PartitionsFooterSize+4+1 {
		return nil, corrupt(0, "at least "+strconv.Itoa(PartitionsFooterSize+5)+" bytes (a root node, two key lengths and the footer), found "+strconv.FormatInt(size, 10), nil)
	}
	footerPos := size - PartitionsFooterSize
	b, err := src.Window(footerPos, PartitionsFooterSize)
	if err != nil || len(b) < PartitionsFooterSize {
		return nil, corrupt(footerPos, "the 24-byte footer", err)
	}
	pi := &PartitionIndex{partitioner: p}
	pi.KeysPos = int64(binary.BigEndian.Uint64(b))
	pi.KeyCount = int64(binary.BigEndian.Uint64(b[8:]))
	pi.Root = int64(binary.BigEndian.Uint64(b[16:]))
	if pi.KeysPos < 1 || pi.KeysPos > footerPos-4 {
		return nil, corrupt(footerPos, "the position of the first and last keys between 1 and "+strconv.FormatInt(footerPos-4, 10)+", found "+strconv.FormatInt(pi.KeysPos, 10), nil)
	}
	if pi.KeyCount < 0 || pi.KeyCount > pi.KeysPos {
		return nil, corrupt(footerPos+8, "a key count between 0 and "+strconv.FormatInt(pi.KeysPos, 10)+", found "+strconv.FormatInt(pi.KeyCount, 10), nil)
	}
	if pi.Root < 0 || pi.Root >= pi.KeysPos {
		return nil, corrupt(footerPos+16, "a root position before the keys at "+strconv.FormatInt(pi.KeysPos, 10)+", found "+strconv.FormatInt(pi.Root, 10), nil)
	}
	pos := pi.KeysPos
	for _, k := range []*[]byte{&pi.FirstKey, &pi.LastKey} {
		b, err := src.Window(pos, 2)
		if err != nil || len(b) < 2 {
			return nil, corrupt(pos, "a key length", err)
		}
		n := int64(binary.BigEndian.Uint16(b))
		if pos+2+n > footerPos {
			return nil, corrupt(pos, "a key of "+strconv.FormatInt(n, 10)+" bytes before the footer", nil)
		}
		b, err = src.Window(pos+2, int(n))
		if err != nil || int64(len(b)) < n {
			return nil, corrupt(pos+2, "the key's bytes", err)
		}
		*k = append([]byte{}, b[:n]...)
		pos += 2 + n
	}
	if pos != footerPos {
		return nil, corrupt(pos, "the footer right after the last key, "+strconv.FormatInt(footerPos-pos, 10)+" bytes earlier", nil)
	}
	if pi.trie, err = trie.NewReader(src, pi.Root, path, format.ComponentPartitions); err != nil {
		return nil, err
	}
	return pi, nil
}

// OpenPartitionsFile opens a Partitions.db opened with reader.Open.
func OpenPartitionsFile(f reader.File, p token.Partitioner) (*PartitionIndex, error) {
	return OpenPartitions(trie.NewFileSource(f), f.Path(), p)
}

// Trie is the underlying trie reader (for node-level inspection).
func (pi *PartitionIndex) Trie() *trie.Reader { return pi.trie }

// Partitioner is the partitioner the index was opened with.
func (pi *PartitionIndex) Partitioner() token.Partitioner { return pi.partitioner }

func (pi *PartitionIndex) payload(n *trie.Node) (PartitionPayload, error) {
	p, _, err := decodePartitionPayload(n)
	if err != nil {
		return p, pi.ownErr(err)
	}
	return p, nil
}

func (pi *PartitionIndex) ownErr(err error) error {
	return corrupt.Place(err, pi.trie.File, pi.trie.Component, 0)
}

// Candidate looks up a partition key and returns the position Partitions.db
// maps it to, if any (PartitionIndex.Reader.exactCandidate). Only a unique
// prefix of each key is stored: ok means the key may be in the sstable,
// and the caller must compare it with the key at the position (in Data.db
// or in Rows.db, which both start with the key). ok is false when the
// prefix is not in the trie or the hash byte differs.
func (pi *PartitionIndex) Candidate(key []byte) (PartitionPayload, bool, error) {
	bc, err := bytecomparable.DecoratedKey(pi.partitioner, key)
	if err != nil {
		return PartitionPayload{}, false, err
	}
	return pi.CandidateBC(bc, KeyHash(key))
}

// CandidateBC is Candidate for a key already in byte-comparable form with
// its hash byte.
func (pi *PartitionIndex) CandidateBC(bc []byte, hash byte) (PartitionPayload, bool, error) {
	e, ok, err := pi.LookupBC(bc, hash)
	return e.PartitionPayload, ok, err
}

// LookupBC is CandidateBC that also says where the walk ended: the entry's
// NodePos is the node holding the payload found, or, when ok is false, the
// node where the walk for bc stopped (its Prefix is nil).
func (pi *PartitionIndex) LookupBC(bc []byte, hash byte) (PartitionEntry, bool, error) {
	n, consumed, err := pi.trie.Follow(bc)
	if err != nil {
		return PartitionEntry{}, false, err
	}
	e := PartitionEntry{NodePos: n.Pos}
	// The walk must end at a leaf, or use up the whole key.
	if consumed < len(bc) && n.TransitionRange() > 0 {
		return e, false, nil
	}
	if !n.HasPayload() {
		return e, false, nil
	}
	if e.PartitionPayload, err = pi.payload(&n); err != nil {
		return e, false, err
	}
	if e.HasHash && e.Hash != hash {
		return e, false, nil
	}
	return e, true, nil
}

// FloorBC is the entry with the greatest stored prefix at or below bc, a
// key's byte-comparable form: the key's own candidate when the trie holds
// a prefix of bc, else the entry of the greatest key below it. ok is false
// when every entry is greater. A lookup that found no partition proves its
// answer with it: the partition this entry leads to must sort below the
// key, and the one after it in Data.db above.
func (pi *PartitionIndex) FloorBC(bc []byte) (PartitionEntry, bool, error) {
	return pi.entry(pi.trie.Floor(bc))
}

// LowerBC is the entry with the greatest stored prefix strictly below
// prefix (an entry's Prefix): the partition before that entry's.
func (pi *PartitionIndex) LowerBC(prefix []byte) (PartitionEntry, bool, error) {
	return pi.entry(pi.trie.Lower(prefix))
}

func (pi *PartitionIndex) entry(e trie.Entry, ok bool, err error) (PartitionEntry, bool, error) {
	if err != nil || !ok {
		return PartitionEntry{}, false, err
	}
	p, err := pi.payload(&e.Node)
	if err != nil {
		return PartitionEntry{}, false, err
	}
	return PartitionEntry{Prefix: e.Key, NodePos: e.Node.Pos, PartitionPayload: p}, true, nil
}

// PartitionEntry is one entry of Partitions.db.
type PartitionEntry struct {
	// Prefix is the stored prefix of the key's byte-comparable form.
	Prefix []byte
	// NodePos is the position of the trie node holding the payload.
	NodePos int64
	PartitionPayload
}

// PartitionIterator lists Partitions.db entries in key order.
type PartitionIterator struct {
	pi  *PartitionIndex
	it  *trie.Iterator
	cur PartitionEntry
	err error
}

// Iter returns an iterator positioned before the first entry.
func (pi *PartitionIndex) Iter() *PartitionIterator {
	return &PartitionIterator{pi: pi, it: pi.trie.NewIterator()}
}

func (it *PartitionIterator) load(ok bool) bool {
	if !ok {
		it.err = it.it.Err()
		return false
	}
	n := it.it.Node()
	p, err := it.pi.payload(&n)
	if err != nil {
		it.err = err
		return false
	}
	it.cur = PartitionEntry{Prefix: it.it.Key(), NodePos: n.Pos, PartitionPayload: p}
	return true
}

// First moves to the first entry.
func (it *PartitionIterator) First() bool { return it.load(it.it.First()) }

// Next moves to the next entry.
func (it *PartitionIterator) Next() bool { return it.load(it.it.Next()) }

// SeekKey moves to the first entry that can hold a partition key greater
// than or equal to key (PartitionIndex.Reader.ceiling): the entry whose
// prefix is a prefix of the key's byte-comparable form, which the caller
// must check against the full key, or else the first greater one.
func (it *PartitionIterator) SeekKey(key []byte) bool {
	bc, err := bytecomparable.DecoratedKey(it.pi.partitioner, key)
	if err != nil {
		it.err = err
		return false
	}
	return it.SeekBC(bc)
}

// SeekBC is SeekKey for a byte-comparable position, for example a token's
// lower bound: AppendToken output after a NextComponent byte.
func (it *PartitionIterator) SeekBC(bc []byte) bool { return it.load(it.it.SeekPrefixGE(bc)) }

// Entry is the current entry; its Prefix is valid until the iterator moves.
func (it *PartitionIterator) Entry() PartitionEntry { return it.cur }

// Err is the error that ended the iteration, if any.
func (it *PartitionIterator) Err() error { return it.err }

// Stats describes the trie; payload bytes include hash bytes.
func (pi *PartitionIndex) Stats() (trie.Stats, error) {
	return pi.trie.Stats(func(n *trie.Node) (int, error) {
		_, size, err := decodePartitionPayload(n)
		return size, err
	})
}
