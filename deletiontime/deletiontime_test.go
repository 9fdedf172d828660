package deletiontime

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestLiveSizes(t *testing.T) {
	if got := Legacy.Size(Live); got != 12 {
		t.Fatalf("legacy LIVE size %d, want 12", got)
	}
	if got := Compact.Size(Live); got != 1 {
		t.Fatalf("compact LIVE size %d, want 1", got)
	}
	b, _ := Legacy.Append(nil, Live)
	want := []byte{0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("legacy LIVE = % x, want % x", b, want)
	}
	b, _ = Compact.Append(nil, Live)
	if !bytes.Equal(b, []byte{0x80}) {
		t.Fatalf("compact LIVE = % x", b)
	}
}

func TestRoundTrip(t *testing.T) {
	ds := []DeletionTime{Live, {1700000000000000, 1700000000}, {0, 0}, {math.MaxInt64, math.MaxInt32 - 1}}
	for _, l := range []Layout{Legacy, Compact} {
		for _, d := range ds {
			b, err := l.Append(nil, d)
			if err != nil {
				t.Fatalf("%v %v: %v", l, d, err)
			}
			got, n, err := l.Decode(b)
			if err != nil || got != d || n != len(b) || n != l.Size(d) {
				t.Fatalf("%v %+v: got %+v n=%d err=%v", l, d, got, n, err)
			}
		}
	}
}

func TestCompactCorruptFlag(t *testing.T) {
	b := []byte{0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	_, _, err := Compact.Decode(b)
	var cf *CorruptFlagError
	if !errors.As(err, &cf) || cf.Flag != 0x81 {
		t.Fatalf("want CorruptFlagError, got %v", err)
	}
}

func TestRangeChecks(t *testing.T) {
	past2038 := DeletionTime{MarkedForDeleteAt: 1, LocalDeletionTime: math.MaxInt32 + 10}
	if _, err := Legacy.Append(nil, past2038); err == nil {
		t.Fatalf("legacy must refuse a localDeletionTime past 2038")
	}
	if _, err := Compact.Append(nil, past2038); err != nil {
		t.Fatalf("compact holds unsigned ints: %v", err)
	}
	c, changed := Cap(past2038, Legacy)
	if !changed || c.LocalDeletionTime != math.MaxInt32-1 {
		t.Fatalf("cap gave %+v %v", c, changed)
	}
	if _, changed := Cap(past2038, Compact); changed {
		t.Fatal("compact holds 2038+; Cap changed it")
	}
	// A 3.x/4.x overflow (negative) becomes 5.0's invalid deletion time,
	// which the compact layout holds and decodes unchanged.
	neg := DeletionTime{MarkedForDeleteAt: 1677485274992000, LocalDeletionTime: -1}
	if _, err := Compact.Append(nil, neg); err == nil {
		t.Fatal("compact must refuse a negative localDeletionTime")
	}
	c, changed = Cap(neg, Compact)
	b, err := Compact.Append(nil, c)
	if !changed || err != nil || c.LocalDeletionTime != 0xFFFFFFFE {
		t.Fatalf("cap of a negative ldt gave %+v %v %v", c, changed, err)
	}
	if back, _, err := Compact.Decode(b); err != nil || back != c {
		t.Fatalf("decoded %+v %v, want %+v", back, err, c)
	}
	if _, err := Compact.Append(nil, DeletionTime{MarkedForDeleteAt: -5, LocalDeletionTime: 1}); err == nil {
		t.Fatalf("compact must refuse a negative markedForDeleteAt")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x80}, false)
	f.Add([]byte{0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, b []byte, legacy bool) {
		l := Compact
		if legacy {
			l = Legacy
		}
		d, n, err := l.Decode(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("read past the end")
		}
		re, err := l.Append(nil, d)
		if err != nil {
			return // values a layout decodes but would refuse to write (e.g. negative ldt)
		}
		if !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encode % x != % x", re, b[:n])
		}
	})
}
