package bti

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
)

// partitionCodec stores a PartitionPayload as Cassandra 5.0 always does:
// the hash byte, then the position in as few bytes as hold its sign
// (PartitionIndex.PartitionIndexSerializer).
type partitionCodec struct{}

func (partitionCodec) Size(p PartitionPayload) int { return 1 + sizedIntSize(p.Pos) }

func (partitionCodec) Flags(p PartitionPayload) uint8 {
	return uint8(flagHasHash + sizedIntSize(p.Pos) - 1)
}

func (partitionCodec) Append(dst []byte, p PartitionPayload) []byte {
	return appendSizedInt(append(dst, p.Hash), p.Pos, sizedIntSize(p.Pos))
}

// PartitionsWriter writes a Partitions.db from the partitions of an
// sstable in order, as PartitionIndexBuilder does: each key is held back
// until the next one is known, then stored as the shortest prefix of its
// byte-comparable form that differs from both neighbours.
type PartitionsWriter struct {
	out *trie.Output
	tw  *trie.Writer[PartitionPayload]
	p   token.Partitioner

	first, last []byte // partition keys
	lastBC      []byte
	lastPayload PartitionPayload
	lastDiff    int
	pending     bool // last has not been added to the trie
	count       int64
	done        bool
}

// NewPartitionsWriter writes Partitions.db to w (from its start).
func NewPartitionsWriter(w io.Writer, p token.Partitioner) *PartitionsWriter {
	out := trie.NewOutput(w, 0)
	return &PartitionsWriter{out: out, tw: trie.NewWriter[PartitionPayload](out, partitionCodec{}), p: p}
}

// AddData adds a partition without a row index: its key and the position
// of the partition in Data.db.
func (w *PartitionsWriter) AddData(key []byte, dataPos int64) error {
	if dataPos < 0 {
		return fmt.Errorf("bti: negative Data.db position %d", dataPos)
	}
	return w.Add(key, ^dataPos)
}

// AddRowIndex adds a partition with a Rows.db entry at rowsPos.
func (w *PartitionsWriter) AddRowIndex(key []byte, rowsPos int64) error {
	if rowsPos < 0 {
		return fmt.Errorf("bti: negative Rows.db position %d", rowsPos)
	}
	return w.Add(key, rowsPos)
}

// Add adds the next partition with the position as Partitions.db stores
// it: a Rows.db position, or ^ the Data.db position (PartitionPayload.Pos).
// Keys must come in the partitioner's order.
func (w *PartitionsWriter) Add(key []byte, pos int64) error {
	if w.done {
		return fmt.Errorf("bti: Add after Finish")
	}
	bc, err := bytecomparable.DecoratedKey(w.p, key)
	if err != nil {
		return err
	}
	if w.count == 0 {
		w.first = append([]byte{}, key...)
		w.lastDiff = 0
	} else {
		if bytes.Compare(bc, w.lastBC) <= 0 {
			return fmt.Errorf("bti: partition key %x does not sort after %x under %s", key, w.last, w.p.Name())
		}
		diff := diffPoint(w.lastBC, bc)
		if err := w.tw.Add(w.lastBC[:min(max(diff, w.lastDiff), len(w.lastBC))], w.lastPayload); err != nil {
			return err
		}
		w.lastDiff = diff
	}
	w.count++
	w.last = append(w.last[:0], key...)
	w.lastBC = append(w.lastBC[:0], bc...)
	w.lastPayload = PartitionPayload{Pos: pos, Hash: KeyHash(key), HasHash: true}
	w.pending = true
	return nil
}

// diffPoint is the length of the shortest prefix of a that differs from b
// (ByteComparable.diffPoint): their common prefix plus one.
func diffPoint(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i + 1
}

// Finish writes the rest of the trie, the first and last keys and the
// footer, flushes, and returns the size of the file.
func (w *PartitionsWriter) Finish() (int64, error) {
	if w.done {
		return w.out.Pos(), nil
	}
	w.done = true
	if w.pending {
		if err := w.tw.Add(w.lastBC[:min(w.lastDiff, len(w.lastBC))], w.lastPayload); err != nil {
			return 0, err
		}
	}
	root, err := w.tw.Complete()
	if err != nil {
		return 0, err
	}
	keysPos := w.out.Pos()
	var b []byte
	for _, k := range [][]byte{w.first, w.last} {
		if len(k) > 0xFFFF {
			return 0, fmt.Errorf("bti: partition key of %d bytes", len(k))
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
		b = append(b, k...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(keysPos))
	b = binary.BigEndian.AppendUint64(b, uint64(w.tw.Count()))
	b = binary.BigEndian.AppendUint64(b, uint64(root))
	if _, err := w.out.Write(b); err != nil {
		return 0, err
	}
	return w.out.Pos(), w.out.Flush()
}
