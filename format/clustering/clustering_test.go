package clustering

import (
	"bytes"
	"testing"
)

func TestValuesRoundTrip(t *testing.T) {
	fixed := []int{4, -1, -1, 8}
	vals := [][]byte{{0, 0, 0, 7}, []byte("abc"), {}, nil}
	b, err := AppendValues(nil, vals, fixed)
	if err != nil {
		t.Fatal(err)
	}
	// header: value 2 empty (bit 4), value 3 null (bit 7) = 0x90 -> vint 0x80 0x90
	want := []byte{0x80, 0x90, 0, 0, 0, 7, 3, 'a', 'b', 'c'}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x, want % x", b, want)
	}
	if ValuesSize(vals, fixed) != len(b) {
		t.Fatalf("ValuesSize %d != %d", ValuesSize(vals, fixed), len(b))
	}
	got, n, err := DecodeValues(nil, b, 4, fixed)
	if err != nil || n != len(b) {
		t.Fatalf("decode: n=%d err=%v", n, err)
	}
	if !bytes.Equal(got[0], vals[0]) || string(got[1]) != "abc" || got[2] == nil || len(got[2]) != 0 || got[3] != nil {
		t.Fatalf("decoded %q", got)
	}
}

func TestManyValuesUseSeveralHeaders(t *testing.T) {
	fixed := make([]int, 40)
	vals := make([][]byte, 40)
	for i := range fixed {
		fixed[i] = -1
		vals[i] = []byte{byte(i)}
	}
	vals[35] = nil
	b, _ := AppendValues(nil, vals, fixed)
	got, n, err := DecodeValues(nil, b, 40, fixed)
	if err != nil || n != len(b) || got[35] != nil || got[39][0] != 39 {
		t.Fatalf("n=%d len=%d err=%v", n, len(b), err)
	}
}

func TestBound(t *testing.T) {
	fixed := []int{-1}
	p := Prefix{Kind: InclStartBound, Values: [][]byte{[]byte("k")}}
	b, _ := AppendBound(nil, p, fixed)
	got, n, err := DecodeBound(nil, b, fixed)
	if err != nil || n != len(b) || got.Kind != InclStartBound || string(got.Values[0]) != "k" || n != BoundSize(p, fixed) {
		t.Fatalf("bound: %+v n=%d err=%v", got, n, err)
	}
	if _, _, err := DecodeBound(nil, []byte{9, 0, 0}, fixed); err == nil {
		t.Fatal("kind 9 must be rejected")
	}
}

func FuzzDecodeValues(f *testing.F) {
	f.Add([]byte{0x80, 0x90, 0, 0, 0, 7, 3, 'a', 'b', 'c'}, uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, size uint8) {
		fixed := []int{4, -1, -1, 8, -1, 16}
		s := int(size) % (len(fixed) + 1)
		vals, n, err := DecodeValues(nil, b, s, fixed)
		if err != nil {
			return
		}
		if n > len(b) || len(vals) != s {
			t.Fatalf("n=%d len=%d vals=%d", n, len(b), len(vals))
		}
		re, err := AppendValues(nil, vals, fixed)
		if err != nil {
			t.Fatal(err)
		}
		if len(re) != ValuesSize(vals, fixed) {
			t.Fatal("size mismatch")
		}
	})
}

func TestSkipValuesMatchesDecode(t *testing.T) {
	fixed := []int{4, -1, -1, 8, 16}
	vals := [][]byte{{0, 0, 0, 7}, []byte("abc"), {}, nil, make([]byte, 16)}
	b, err := AppendValues(nil, vals, fixed)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= len(b); cut++ {
		_, dn, derr := DecodeValues(nil, b[:cut], len(vals), fixed)
		sn, serr := SkipValues(b[:cut], len(vals), fixed)
		if (derr == nil) != (serr == nil) || (derr == nil && dn != sn) {
			t.Fatalf("cut %d: decode %d %v, skip %d %v", cut, dn, derr, sn, serr)
		}
	}
}
