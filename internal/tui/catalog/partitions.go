package catalog

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// Unknown marks a count the background scan has not reached yet.
const Unknown = -1

// Counts is what the full scan learns about one partition.
type Counts struct {
	Rows, Cells, Tombstones int64
	// Deleted is 1 when the partition carries a partition-level deletion,
	// 0 when LIVE, Unknown before the scan reached it.
	Deleted int8
	// Failed is set when the partition could not be decoded.
	Failed bool
}

var unknownCounts = Counts{Rows: Unknown, Cells: Unknown, Tombstones: Unknown, Deleted: Unknown}

// List is one sstable's partitions in Index.db order, which is token order.
// Keys, Offsets and Sizes never change once listed, so background work may
// read them; Counts is written only by Apply.
type List struct {
	Keys    [][]byte
	Offsets []int64 // uncompressed Data.db positions
	Sizes   []int64 // header to end-of-partition byte, inclusive
	Counts  []Counts
	// Source says where the list came from: "Index.db", or "Data.db" when
	// Index.db was missing or unreadable (then Warning says why).
	Source  string
	Warning error
	// Scanned counts partitions whose Counts are known.
	Scanned int
}

// Len is the number of partitions.
func (l *List) Len() int { return len(l.Offsets) }

// ListPartitions lists the partitions from Index.db: keys and positions,
// with sizes from consecutive positions (the last runs to the end of
// Data.db). Without a readable Index.db it walks Data.db instead, skipping
// row bodies by their sizes.
func (t *Table) ListPartitions() (*List, error) {
	if !t.hold() {
		return nil, ErrClosed
	}
	defer t.release()
	if t.S.Version().IsBTI() {
		// Partitions.db stores only the shortest unique key prefixes; the
		// keys themselves are in Data.db.
		return t.listFromData()
	}
	l, err := t.listFromIndex()
	if err == nil {
		return l, nil
	}
	l, err2 := t.listFromData()
	if err2 != nil {
		return l, errors.Join(err, err2)
	}
	l.Warning = err
	return l, nil
}

func (t *Table) listFromIndex() (*List, error) {
	s := t.S
	if s.Index() == nil {
		return nil, fmt.Errorf("%s: %w", s.Path(format.ComponentIndex), sstable.ErrNoIndex)
	}
	// Keys go into one arena, so a million partitions are a few large
	// allocations rather than a million small ones.
	arena := make([]byte, 0, min(s.Index().Size(), 64<<20))
	// Summary.db's estimate is only a hint and comes from two ints of a
	// file that may be damaged: it never goes past what Index.db could
	// hold (an entry is at least a 2-byte key length, a key byte, a
	// position and a promoted-index size).
	maxEntries := s.Index().Size()/minIndexEntry + 1
	hint := int(min(s.Index().Size()/16, 1<<24))
	if sum, err := s.Summary(); err == nil {
		hint = int(min(sum.EstimatedKeyCount()+16, maxEntries, 1<<26))
	}
	l := &List{Source: "Index.db", Keys: make([][]byte, 0, hint), Offsets: make([]int64, 0, hint)}
	sc := index.NewScanner(s.Index(), s.IndexCodec(), 0, false)
	length := s.Data().Length()
	for sc.Next() {
		e := sc.Entry()
		if e.Position > length || (len(l.Offsets) > 0 && e.Position <= l.Offsets[len(l.Offsets)-1]) {
			return l, fmt.Errorf("%s: Index.db entry at byte %d: expected a Data.db position after %d and within %d, found %d",
				s.Path(format.ComponentIndex), sc.EntryPos(), lastOr(l.Offsets, -1), length, e.Position)
		}
		if cap(arena)-len(arena) < len(e.Key) {
			arena = make([]byte, 0, max(64<<10, len(e.Key)))
		}
		start := len(arena)
		arena = append(arena, e.Key...)
		l.Keys = append(l.Keys, arena[start:len(arena):len(arena)])
		l.Offsets = append(l.Offsets, e.Position)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return l, err
	}
	l.finish(length)
	return l, nil
}

// minIndexEntry is the fewest bytes an Index.db entry takes.
const minIndexEntry = 2 + 1 + 1 + 1

func lastOr(v []int64, d int64) int64 {
	if len(v) == 0 {
		return d
	}
	return v[len(v)-1]
}

func (l *List) finish(length int64) {
	n := len(l.Offsets)
	l.Sizes = make([]int64, n)
	for i := range n {
		end := length
		if i+1 < n {
			end = l.Offsets[i+1]
		}
		l.Sizes[i] = end - l.Offsets[i]
	}
	l.Counts = make([]Counts, n)
	for i := range l.Counts {
		l.Counts[i] = unknownCounts
	}
}

func (t *Table) listFromData() (*List, error) {
	l := &List{Source: "Data.db"}
	err := t.S.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		l.Keys = append(l.Keys, append([]byte(nil), p.Key...))
		l.Offsets = append(l.Offsets, p.Offset)
		return nil
	})
	l.finish(t.S.Data().Length())
	return l, err
}

// SortKey is an order of the partitions table.
type SortKey int

const (
	BySize SortKey = iota
	ByRows
	ByCells
	ByTombstones
	ByToken
	numSortKeys
)

func (k SortKey) String() string {
	return [...]string{"size", "rows", "cells", "tombstones", "token"}[k]
}

// Next is the key after k when cycling.
func (k SortKey) Next() SortKey { return (k + 1) % numSortKeys }

// NeedsCounts reports whether the order depends on the background scan.
func (k SortKey) NeedsCounts() bool { return k == ByRows || k == ByCells || k == ByTombstones }

// Values snapshots the sort values of every partition (nil for ByToken),
// so that sorting can run in the background while counts keep arriving.
func (l *List) Values(k SortKey) []int64 {
	if k == ByToken {
		return nil
	}
	if k == BySize {
		return slices.Clone(l.Sizes)
	}
	v := make([]int64, len(l.Counts))
	for i, c := range l.Counts {
		switch k {
		case ByRows:
			v[i] = c.Rows
		case ByCells:
			v[i] = c.Cells
		case ByTombstones:
			v[i] = c.Tombstones
		}
	}
	return v
}

// Order returns the partition indexes sorted by values, descending, ties
// (and a nil values) in token order.
func Order(n int, values []int64) []int32 {
	out := make([]int32, n)
	if values == nil {
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	// Sorting (value, index) pairs keeps the comparisons on one cache line.
	type pair struct {
		v int64
		i int32
	}
	ps := make([]pair, n)
	for i := range ps {
		ps[i] = pair{values[i], int32(i)}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		return int(a.i - b.i)
	})
	for i, p := range ps {
		out[i] = p.i
	}
	return out
}

// KeyTexts renders every key, lowercased, for filtering.
func (t *Table) KeyTexts(l *List) []string {
	out := make([]string, len(l.Keys))
	for i, k := range l.Keys {
		out[i] = strings.ToLower(t.FormatKey(k))
	}
	return out
}

// Filter keeps the entries of order whose key text contains q (case-insensitive).
func Filter(order []int32, texts []string, q string) []int32 {
	q = strings.ToLower(q)
	out := make([]int32, 0, 64)
	for _, i := range order {
		if strings.Contains(texts[i], q) {
			out = append(out, i)
		}
	}
	return out
}

// SeekToken returns the first partition (in token order) whose token is at
// or after tok; Len() when there is none.
func (t *Table) SeekToken(l *List, tok token.Token) int {
	p := t.S.Partitioner()
	lo, hi := 0, len(l.Keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.Compare(p.Token(l.Keys[m]), tok) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Bucket is one bar of a size histogram: partitions of Lo..Hi-1 bytes.
type Bucket struct {
	Lo, Hi int64
	Count  int
}

// Histogram buckets sizes by powers of two, from the smallest to the
// largest populated bucket.
func Histogram(sizes []int64) []Bucket {
	var counts [64]int
	lo, hi := 64, -1
	for _, s := range sizes {
		b := 0
		if s > 0 {
			b = 63 - bits.LeadingZeros64(uint64(s))
		}
		counts[b]++
		lo, hi = min(lo, b), max(hi, b)
	}
	var out []Bucket
	for b := lo; b <= hi; b++ {
		out = append(out, Bucket{Lo: int64(1) << b, Hi: int64(1) << (b + 1), Count: counts[b]})
	}
	return out
}
