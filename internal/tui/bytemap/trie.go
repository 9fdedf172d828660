package bytemap

import (
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
)

// A trie-indexed (BTI) sstable's Partitions.db and Rows.db are labelled by
// format/bti (PartitionIndex.Spans, RowIndex.Spans), which walks the
// tries; here each kind of field only gets the colour class the hex view
// paints it with and the name its legend gives that class.

var trieClass = [...]Class{
	bti.SpanNodeHeader:  Flags,
	bti.SpanTransitions: Clustering,
	bti.SpanPointers:    Size,
	bti.SpanHash:        CellHeader,
	bti.SpanPosition:    Liveness,
	bti.SpanDeletion:    Deletion,
	bti.SpanKeyLength:   KeyLength,
	bti.SpanKey:         Key,
	bti.SpanEntryField:  Columns,
	bti.SpanFooter:      EndOfPartition,
}

// TrieClasses lists the classes of a trie file's bytes, in legend order.
func TrieClasses() []Class {
	return []Class{Flags, Clustering, Size, CellHeader, Liveness, Deletion, KeyLength, Key, Columns, EndOfPartition, Unlabelled}
}

// TrieClassName is what a class stands for in Partitions.db or Rows.db.
func TrieClassName(c Class) string {
	for k, tc := range trieClass {
		if tc == c {
			return bti.SpanKind(k).String()
		}
	}
	if c == Unlabelled {
		return "page padding"
	}
	return c.String()
}

// TrieSpans turns labelled trie file bytes into hex view spans over the n
// bytes read at base: a field that the window cuts is shown in part.
func TrieSpans(in []bti.Span, base int64, n int) []Span {
	end := base + int64(n)
	out := make([]Span, 0, len(in))
	for _, s := range in {
		off, stop := max(s.Off, base), min(s.End(), end)
		if stop <= off {
			continue
		}
		c := Unlabelled
		if int(s.Kind) < len(trieClass) {
			c = trieClass[s.Kind]
		}
		label := s.Label
		if off != s.Off || stop != s.End() {
			label += " (cut by the window)"
		}
		out = append(out, Span{Off: off, Len: int(stop - off), Class: c, Label: label, Short: cellfmt.Truncate(s.Label, 24)})
	}
	return out
}
