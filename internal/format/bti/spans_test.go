package bti

import (
	"bytes"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
)

// checkSpans asserts that spans are sorted, do not overlap, lie in
// [from, to) of b, and that every byte of the range they leave unlabelled
// is zero (page padding). It returns the labelled byte count.
func checkSpans(t *testing.T, name string, b []byte, spans []Span, from, to int64) int64 {
	t.Helper()
	at, labelled := from, int64(0)
	for i, s := range spans {
		if s.Len <= 0 || s.Off < from || s.End() > to || s.Label == "" {
			t.Fatalf("%s: span %d %+v outside [%d,%d) or empty", name, i, s, from, to)
		}
		if s.Off < at {
			t.Fatalf("%s: span %d %+v overlaps the previous one ending at %d", name, i, s, at)
		}
		for p := at; p < s.Off; p++ {
			if b[p] != 0 {
				t.Fatalf("%s: byte %d (%#02x) before span %d %+v is not labelled and not padding", name, p, b[p], i, s)
			}
		}
		at = s.End()
		labelled += int64(s.Len)
	}
	for p := at; p < to; p++ {
		if b[p] != 0 {
			t.Fatalf("%s: byte %d after the last span is not labelled", name, p)
		}
	}
	return labelled
}

// The fixtures' Partitions.db and Rows.db are labelled byte for byte: in
// files this small no byte is padding, and the labels name what the
// readers decode (each partition's hash byte, each Rows.db entry's key).
func TestFixtureSpans(t *testing.T) {
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		pb := readFile(t, dt.prefix+format.ComponentPartitions)
		pi, err := OpenPartitions(trie.BytesSource(pb), "", dt.partitioner)
		if err != nil {
			t.Fatal(err)
		}
		spans, err := pi.Spans(0, int64(len(pb)))
		if err != nil {
			t.Fatal(err)
		}
		if n := checkSpans(t, dt.prefix+format.ComponentPartitions, pb, spans, 0, int64(len(pb))); n != int64(len(pb)) {
			t.Errorf("%s: %d of %d bytes labelled", dt.prefix+format.ComponentPartitions, n, len(pb))
		}
		hashes := 0
		for _, s := range spans {
			if s.Kind == SpanHash {
				hashes++
			}
		}
		if int64(hashes) != pi.KeyCount {
			t.Errorf("%d hash bytes labelled, %d keys", hashes, pi.KeyCount)
		}
		rb := readFile(t, dt.prefix+format.ComponentRows)
		ri := OpenRows(trie.BytesSource(rb), "", dt.version)
		it := pi.Iter()
		var covered int64
		for i, ok := 0, it.First(); ok; i, ok = i+1, it.Next() {
			if !it.Entry().InRowIndex() {
				continue
			}
			e, err := ri.Entry(it.Entry().RowIndexPos())
			if err != nil {
				t.Fatal(err)
			}
			start, err := ri.TrieStart(e)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := ri.Spans(e, start, e.End)
			if err != nil {
				t.Fatal(err)
			}
			if start != covered {
				t.Errorf("entry %d's trie starts at %d, the previous entry ended at %d", i, start, covered)
			}
			covered += checkSpans(t, dt.prefix+format.ComponentRows, rb, rs, start, e.End)
			keys := 0
			for _, s := range rs {
				if s.Kind == SpanKey {
					keys++
					if !strings.Contains(s.Label, string(hexOf(dt.partitions[i].key))) {
						t.Errorf("key span %q, partition key %x", s.Label, dt.partitions[i].key)
					}
				}
			}
			if keys != 1 {
				t.Errorf("entry %d: %d key spans", i, keys)
			}
		}
		if covered != int64(len(rb)) {
			t.Errorf("%s: entries and tries cover %d of %d bytes", dt.prefix+format.ComponentRows, covered, len(rb))
		}
	}
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// A trie of many pages (padding between them, pointers of several widths)
// is labelled wherever a window falls: nothing overlaps, every unlabelled
// byte is padding, and windows add up to the whole file.
func TestSpansManyPages(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	keys := sortedKeys(rng, token.Murmur3, 20000)
	var buf bytes.Buffer
	w := NewPartitionsWriter(&buf, token.Murmur3)
	for _, k := range keys {
		if err := w.Add(k.key, k.pos); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	pi, err := OpenPartitions(trie.BytesSource(b), "", token.Murmur3)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := pi.Spans(0, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	total := checkSpans(t, "whole", b, whole, 0, int64(len(b)))
	if total >= int64(len(b)) || total < int64(len(b))*9/10 {
		t.Errorf("%d of %d bytes labelled: expected some page padding, little else", total, len(b))
	}
	var sum int64
	for from := int64(0); from < int64(len(b)); from += 10000 {
		to := min(from+10000, int64(len(b)))
		spans, err := pi.Spans(from, to)
		if err != nil {
			t.Fatal(err)
		}
		// A node cut by the window edge is not counted in either window:
		// compare the spans wholly inside.
		for _, s := range spans {
			if s.Off >= from && s.End() <= to {
				sum += int64(s.Len)
			}
		}
	}
	var inside int64
	for _, s := range whole {
		if s.Off/10000 == (s.End()-1)/10000 {
			inside += int64(s.Len)
		}
	}
	if sum != inside {
		t.Errorf("windows label %d bytes, the whole file %d in the same windows", sum, inside)
	}
}

// FuzzSpans labels arbitrary bytes as Partitions.db and as Rows.db: spans
// or a *corrupt.Error, sorted and inside the range asked for, never
// a panic or an endless walk.
func FuzzSpans(f *testing.F) {
	for _, b := range fixtureComponent(format.ComponentPartitions) {
		f.Add(b, int64(0), int64(len(b)), true)
	}
	for _, b := range fixtureComponent(format.ComponentRows) {
		f.Add(b, int64(93), int64(len(b)), false)
	}
	v, _ := format.ParseFormatVersion(format.BTI, "da")
	f.Fuzz(func(t *testing.T, b []byte, from, to int64, partitions bool) {
		var spans []Span
		var err error
		if partitions {
			pi, perr := OpenPartitions(trie.BytesSource(b), "fuzz", token.ByteOrdered)
			if perr != nil {
				return
			}
			spans, err = pi.Spans(from, to)
		} else {
			ri := OpenRows(trie.BytesSource(b), "fuzz", v)
			e, eerr := ri.Entry(from)
			if eerr != nil {
				return
			}
			spans, err = ri.Spans(e, 0, to)
			from = 0
		}
		if err != nil {
			var ce *corrupt.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		for i, s := range spans {
			if s.End() <= from || s.Off >= to || s.Len <= 0 || (i > 0 && s.Off < spans[i-1].Off) {
				t.Fatalf("span %d %+v outside [%d,%d), empty or out of order", i, s, from, to)
			}
		}
	})
}
