package vint

import (
	"bytes"
	"math"
	"testing"
)

// Encodings computed by hand from VIntCoding's rules: n-1 leading one bits
// in the first byte, value big-endian in the remaining bits.
func TestKnownEncodings(t *testing.T) {
	cases := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{127, []byte{0x7F}},
		{128, []byte{0x80, 0x80}},
		{16383, []byte{0xBF, 0xFF}},
		{16384, []byte{0xC0, 0x40, 0x00}},
		{2097151, []byte{0xDF, 0xFF, 0xFF}},
		{2097152, []byte{0xE0, 0x20, 0x00, 0x00}},
		{math.MaxUint64, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{1 << 56, []byte{0xFF, 0x01, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := AppendUnsigned(nil, c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("AppendUnsigned(%d) = % x, want % x", c.v, got, c.want)
		}
		if UnsignedSize(c.v) != len(c.want) {
			t.Errorf("UnsignedSize(%d) = %d, want %d", c.v, UnsignedSize(c.v), len(c.want))
		}
		v, n, err := Unsigned(c.want)
		if err != nil || v != c.v || n != len(c.want) {
			t.Errorf("Unsigned(% x) = %d, %d, %v", c.want, v, n, err)
		}
	}
}

func TestSignedRoundTrip(t *testing.T) {
	for _, v := range []int64{0, -1, 1, -64, 63, 64, -65, math.MinInt64, math.MaxInt64, 1 << 40} {
		b := AppendSigned(nil, v)
		got, n, err := Signed(b)
		if err != nil || got != v || n != len(b) || n != SignedSize(v) {
			t.Errorf("signed %d: got %d n=%d len=%d err=%v", v, got, n, len(b), err)
		}
	}
	if !bytes.Equal(AppendSigned(nil, -1), []byte{1}) {
		t.Errorf("zig-zag of -1 should be 1")
	}
}

func TestShort(t *testing.T) {
	if _, _, err := Unsigned([]byte{0xC0, 0x01}); err != ErrShort {
		t.Fatalf("want ErrShort, got %v", err)
	}
	if _, _, err := Unsigned32([]byte{0xF0, 0xFF, 0xFF, 0xFF, 0xFF}); err == nil {
		t.Fatalf("want overflow error")
	}
}

func FuzzUnsigned(f *testing.F) {
	f.Add([]byte{0x80, 0x80})
	f.Add([]byte{0xFF, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := Unsigned(b)
		if err != nil {
			return
		}
		if n > len(b) || n > MaxLen {
			t.Fatalf("read %d bytes of %d", n, len(b))
		}
		// Decoding accepts non-minimal encodings; re-encoding must decode to the same value.
		re := AppendUnsigned(nil, v)
		v2, _, err := Unsigned(re)
		if err != nil || v2 != v {
			t.Fatalf("re-encode of %d gave %d (%v)", v, v2, err)
		}
	})
}

// At (and Load8, where it answers) must agree with Unsigned for every width, whether the
// buffer leaves room for its 8-byte load or ends right after the vint.
func TestAtAndLoad8MatchUnsigned(t *testing.T) {
	for bitsN := 0; bitsN <= 64; bitsN++ {
		for _, v := range []uint64{1<<uint(bitsN) - 1, 1 << uint(bitsN) >> 1, 0x5A5A5A5A5A5A5A5A >> uint(64-bitsN)} {
			enc := AppendUnsigned(nil, v)
			for pad := 0; pad <= 9; pad++ {
				b := append([]byte{0xEE}, enc...)
				for i := 0; i < pad; i++ {
					b = append(b, 0xFF)
				}
				got, n := At(b, 1)
				want, wn, err := Unsigned(b[1:])
				if err != nil || got != want || n != wn || got != v {
					t.Fatalf("v=%#x pad=%d: At=(%#x,%d) vint=(%#x,%d,%v)", v, pad, got, n, want, wn, err)
				}
				if v8, n8 := Load8(b, 1); n8 != 0 && (v8 != v || n8 != wn) || n8 == 0 && wn <= 8 && len(b)-1 >= 8 {
					t.Fatalf("v=%#x pad=%d: Load8=(%#x,%d), want (%#x,%d)", v, pad, v8, n8, v, wn)
				}
				if _, n := At(b[:len(enc)], 1); n != 0 {
					t.Fatalf("v=%#x: a vint cut one byte short read as %d bytes", v, n)
				}
			}
		}
	}
}
