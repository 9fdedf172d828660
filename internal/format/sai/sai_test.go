package sai

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
)

// A framed component as SAICodecUtils writes it passes; every single byte
// flipped anywhere in it fails, at the byte or at the checksum.
func TestCheckCatchesEveryFlippedByte(t *testing.T) {
	for _, body := range [][]byte{nil, {0}, {1}, bytes.Repeat([]byte("posting lists "), 300)} {
		b := AppendFramed(nil, "aa", body)
		f, err := Check(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%d-byte body: %v", len(body), err)
		}
		if f.Version != "aa" || f.BodyPos != 7 || f.BodyLen != int64(len(body)) {
			t.Fatalf("frame %+v", f)
		}
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0x01
			_, err := Check(bytes.NewReader(c), int64(len(c)))
			ce, ok := corrupt.As(err)
			if !ok {
				t.Fatalf("byte %d flipped: %v", i, err)
			}
			if ce.Offset > int64(i) && !errors.Is(err, corrupt.ErrChecksum) {
				t.Errorf("byte %d flipped: reported at %d", i, ce.Offset)
			}
		}
	}
}

func TestCheckNamesWhatIsWrong(t *testing.T) {
	good := AppendFramed(nil, "aa", []byte{0})
	for _, tc := range []struct {
		name string
		b    []byte
		want string
		off  int64
	}{
		{"truncated", good[:len(good)-1], "codec footer magic", int64(len(good) - 1 - FooterLength)},
		{"extended", append(bytes.Clone(good), 0), "codec footer magic", int64(len(good) + 1 - FooterLength)},
		{"unknown version", AppendFramed(nil, "zz", []byte{0}), "an SAI version", 4},
		{"too short", good[:10], "at least", 0},
	} {
		_, err := Check(bytes.NewReader(tc.b), int64(len(tc.b)))
		ce, ok := corrupt.As(err)
		if !ok || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) || ce.Offset != tc.off {
			t.Errorf("%s: %v, want %q at %d", tc.name, err, tc.want, tc.off)
		}
	}
}

func TestColumnCompleteEmpty(t *testing.T) {
	for v, want := range map[byte]bool{0: false, 1: true} {
		b := AppendFramed(nil, "aa", []byte{v})
		f, err := Check(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ColumnCompleteEmpty(bytes.NewReader(b), f); err != nil || got != want {
			t.Errorf("%d: %v %v", v, got, err)
		}
	}
	b := AppendFramed(nil, "aa", []byte{2})
	f, _ := Check(bytes.NewReader(b), int64(len(b)))
	if _, err := ColumnCompleteEmpty(bytes.NewReader(b), f); err == nil {
		t.Error("a marker byte of 2 was taken")
	}
}

// FuzzCheck: any bytes give a frame or a *corrupt.Error, never a panic or
// a read past the end; a frame built around the input passes.
func FuzzCheck(f *testing.F) {
	f.Add(AppendFramed(nil, "aa", []byte("x")))
	f.Add([]byte{0x3F, 0xD7, 0x6C, 0x17, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Check(bytes.NewReader(b), int64(len(b))); err != nil {
			if _, ok := corrupt.As(err); !ok {
				t.Fatalf("not a corrupt.Error: %v", err)
			}
		}
		framed := AppendFramed(nil, "aa", b)
		if _, err := Check(bytes.NewReader(framed), int64(len(framed))); err != nil {
			t.Fatalf("framed: %v", err)
		}
		two := AppendFramed(bytes.Clone(framed), "aa", b)
		if f, err := Check(bytes.NewReader(two), int64(len(two))); err != nil || f.Segments < 2 {
			t.Fatalf("two segments: %+v %v", f, err)
		}
	})
}

// A file an index build appended segments to (each framed and checksummed
// on its own, IndexFileUtils.ChecksummingWriter counting one opening's
// bytes) passes; a flipped byte in any segment fails it.
func TestCheckSegments(t *testing.T) {
	var b []byte
	for _, body := range []string{"first segment", "second", "third segment's postings"} {
		b = AppendFramed(b, "aa", []byte(body))
	}
	f, err := Check(bytes.NewReader(b), int64(len(b)))
	if err != nil || f.Segments != 3 {
		t.Fatalf("%+v %v", f, err)
	}
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x01
		if _, err := Check(bytes.NewReader(c), int64(len(c))); err == nil {
			t.Errorf("byte %d flipped: passed", i)
		}
	}
}
