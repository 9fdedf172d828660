package bti

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// SpanKind says what a labelled range of Partitions.db or Rows.db holds.
type SpanKind uint8

const (
	SpanNodeHeader  SpanKind = iota // a trie node's type byte (and count or range)
	SpanTransitions                 // transition bytes
	SpanPointers                    // child pointers
	SpanHash                        // Partitions.db payload: the key's hash byte
	SpanPosition                    // a payload's position: Rows.db or ~Data.db (Partitions.db), block offset (Rows.db)
	SpanDeletion                    // a DeletionTime: a block's open deletion, an entry's partition deletion
	SpanKeyLength                   // a partition key's length
	SpanKey                         // a partition key
	SpanEntryField                  // a Rows.db entry's Data.db position, root distance or block count
	SpanFooter                      // Partitions.db's footer longs
	numSpanKinds
)

var spanKindNames = [...]string{"node header", "transitions", "child pointers", "hash byte", "position",
	"DeletionTime", "key length", "key", "entry field", "footer"}

func (k SpanKind) String() string {
	if k < numSpanKinds {
		return spanKindNames[k]
	}
	return "SpanKind(" + strconv.Itoa(int(k)) + ")"
}

// Span is one labelled range of bytes of a trie index file.
type Span struct {
	Off   int64
	Len   int
	Kind  SpanKind
	Label string
}

// End is the offset just past the span.
func (s Span) End() int64 { return s.Off + int64(s.Len) }

// fromTrie converts node spans (payloads are labelled by the callers).
func fromTrie(ts []trie.Span) []Span {
	out := make([]Span, 0, len(ts))
	for _, t := range ts {
		k := SpanNodeHeader
		switch t.Kind {
		case trie.SpanTransitions:
			k = SpanTransitions
		case trie.SpanPointers:
			k = SpanPointers
		case trie.SpanPayload:
			continue
		}
		out = append(out, Span{Off: t.Off, Len: t.Len, Kind: k, Label: t.Label})
	}
	return out
}

// partitionPayloadSpans labels a Partitions.db payload: hash byte and
// position.
func partitionPayloadSpans(n *trie.Node) ([]Span, error) {
	p, size, err := decodePartitionPayload(n)
	if err != nil {
		return nil, err
	}
	at := n.PayloadPos()
	var out []Span
	if p.HasHash {
		out = append(out, Span{Off: at, Len: 1, Kind: SpanHash, Label: fmt.Sprintf("hash byte %#02x (low byte of the key's Murmur3 hash)", p.Hash)})
		at++
		size--
	}
	where := fmt.Sprintf("%d = ~%d: the partition at Data.db byte %d (no row index)", p.Pos, p.DataPos(), p.DataPos())
	if p.InRowIndex() {
		where = fmt.Sprintf("%d: the partition's entry in Rows.db", p.Pos)
	}
	out = append(out, Span{Off: at, Len: size, Kind: SpanPosition, Label: fmt.Sprintf("position, %d bytes: %s", size, where)})
	return out, nil
}

// Spans labels the bytes of Partitions.db in [from, to): every trie node
// there (header, transitions, pointers), each payload (hash byte,
// position), the first and last keys and the footer. Bytes without a span
// are page padding. Sorted by offset.
func (pi *PartitionIndex) Spans(from, to int64) ([]Span, error) {
	var payloads []Span
	ts, err := pi.trie.Spans(from, to, func(n *trie.Node) ([]trie.Span, error) {
		s, err := partitionPayloadSpans(n)
		payloads = append(payloads, s...)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	out := append(fromTrie(ts), payloads...)
	pos := pi.KeysPos
	for i, k := range [][]byte{pi.FirstKey, pi.LastKey} {
		which := [...]string{"first", "last"}[i]
		out = append(out, Span{Off: pos, Len: 2, Kind: SpanKeyLength, Label: fmt.Sprintf("%s key length %d", which, len(k))})
		if len(k) > 0 {
			out = append(out, Span{Off: pos + 2, Len: len(k), Kind: SpanKey, Label: fmt.Sprintf("%s key %x", which, k)})
		}
		pos += 2 + int64(len(k))
	}
	for i, f := range []struct {
		name string
		v    int64
	}{{"position of the first and last keys", pi.KeysPos}, {"key count", pi.KeyCount}, {"root node position", pi.Root}} {
		out = append(out, Span{Off: pos + 8*int64(i), Len: 8, Kind: SpanFooter, Label: fmt.Sprintf("footer: %s %d", f.name, f.v)})
	}
	return clip(out, from, to), nil
}

func clip(spans []Span, from, to int64) []Span {
	out := spans[:0]
	for _, s := range spans {
		if s.End() > from && s.Off < to {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Span) int { return cmp.Compare(a.Off, b.Off) })
	return out
}

// Spans labels the Rows.db entry e and the nodes and payloads (block
// offset, open deletion) of its row index trie, within [from, to). Sorted
// by offset.
func (ri *RowIndex) Spans(e RowIndexEntry, from, to int64) ([]Span, error) {
	tr, err := ri.Trie(e)
	if err != nil {
		return nil, err
	}
	var payloads []Span
	ts, err := tr.Spans(from, to, func(n *trie.Node) ([]trie.Span, error) {
		blk, size, err := decodeRowPayload(n, ri.layout)
		if err != nil {
			return nil, err
		}
		w := int(n.Flags & 7)
		if w > 0 { // Cassandra always writes one byte at least; readers take none as 0
			payloads = append(payloads, Span{Off: n.PayloadPos(), Len: w, Kind: SpanPosition, Label: fmt.Sprintf("block offset, %d bytes: %d from the partition start in Data.db", w, blk.Offset)})
		}
		if blk.HasOpenMarker {
			payloads = append(payloads, Span{Off: n.PayloadPos() + int64(w), Len: size - w, Kind: SpanDeletion, Label: "range deletion open at the block's start: " + deletionText(blk.OpenDeletion)})
		}
		return nil, nil
	})
	if err != nil {
		return nil, ri.own(err)
	}
	out := append(fromTrie(ts), payloads...)
	// The entry: key length, key, Data.db position, root distance, block
	// count, partition deletion.
	b, err := ri.src.Window(e.Pos, int(e.End-e.Pos))
	if err != nil || int64(len(b)) < e.End-e.Pos {
		return nil, ri.corrupt(e.Pos, "the row index entry", err)
	}
	off := e.Pos
	add := func(n int, k SpanKind, label string) {
		if n > 0 {
			out = append(out, Span{Off: off, Len: n, Kind: k, Label: label})
		}
		off += int64(n)
	}
	add(2, SpanKeyLength, fmt.Sprintf("key length %d", binary.BigEndian.Uint16(b)))
	add(len(e.Key), SpanKey, fmt.Sprintf("partition key %x", e.Key))
	rel := func() []byte { return b[off-e.Pos:] }
	add(vint.EncodedLen(rel()[0]), SpanEntryField, fmt.Sprintf("Data.db position %d (unsigned vint)", e.DataPos))
	base := off
	add(vint.EncodedLen(rel()[0]), SpanEntryField, fmt.Sprintf("root at %d - %d = @%d (signed vint)", base, base-e.Root, e.Root))
	add(vint.EncodedLen(rel()[0]), SpanEntryField, fmt.Sprintf("%d index blocks (unsigned vint)", e.BlockCount))
	add(int(e.End-off), SpanDeletion, fmt.Sprintf("partition deletion %s (%s)", deletionText(e.Deletion), ri.layout))
	return clip(out, from, to), nil
}

// TrieStart is the lowest position of any node of the entry's row index
// trie: with the entry's end, the range of Rows.db that belongs to the
// partition.
func (ri *RowIndex) TrieStart(e RowIndexEntry) (int64, error) {
	spans, err := ri.Spans(e, 0, e.End)
	if err != nil {
		return 0, err
	}
	if len(spans) == 0 {
		return e.Pos, nil
	}
	return spans[0].Off, nil
}

func deletionText(d deletiontime.DeletionTime) string {
	if d.IsLive() {
		return "LIVE"
	}
	return fmt.Sprintf("markedForDeleteAt %d, localDeletionTime %d", d.MarkedForDeleteAt, d.LocalDeletionTime)
}
