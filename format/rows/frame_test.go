package rows

import (
	"bytes"
	"testing"

	"github.com/sstabletool/sstabletool/format"
)

// FuzzFrameMatchesFastLoops holds the loops that step over rows without
// scanFrame to it, on arbitrary bytes: skimOne takes exactly the plain rows
// (and end bytes) that scanFrame reads and that fit in the bytes, with the
// same width, at every offset; every row skimFixedWindow steps over is one
// scanFrame reads, with the same width, and so is the end byte it stops
// after; the row fastRow decodes has the frame scanFrame reads (flags,
// clustering, sizes).
func FuzzFrameMatchesFastLoops(f *testing.F) {
	f.Add([]byte{0x24, 0, 4, 0, 0, 0, 0, 1}, true)
	// Fixed-width rows: one of 200 bytes (size 0x80 0xC8), one whose
	// previous-size vint is two bytes, a small one, the end byte.
	big := []byte{0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x80, 0xC8, 0x05}
	big = append(big, make([]byte, 199)...)
	big = append(big, 0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 10, 0x80, 0xD3, 0, 0, 0, 0, 0, 0, 0, 0)
	big = append(big, 0x24, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 7, 21, 0, 1, 2, 3, 4, 5, 0x01)
	f.Add(big, true)
	// Variable clustering: a row, a marker, a static row, the end byte.
	f.Add([]byte{0x24, 0, 2, 'a', 'b', 0, 0, 0, 1, 3, 5, 0,
		0x02, 1, 0, 2, 0, 1, 'c', 0, 0, 0, 2, 3, 0,
		0x80, 0x01, 0x20, 2, 0, 5, 0,
		0x01}, false)
	f.Fuzz(func(t *testing.T, b []byte, fixedClustering bool) {
		cf := []int{-1, 4}
		if fixedClustering {
			cf = []int{8, 4}
		}
		s := &Schema{Version: format.MustVersion("oa"), ClusteringFixed: cf,
			Static:  []Column{{Name: "st", Fixed: -1}},
			Regular: []Column{{Name: "a", Fixed: 4}, {Name: "b", Fixed: -1}}}
		d := NewDecoder(NewBytesSource(nil, 0), s)
		// frame is scanFrame's reading at b[at:]: the unfiltered's width.
		frame := func(at int, values bool) (int64, error) {
			d.u.reset()
			_, _, _, err := d.scanFrame(b[at:], int64(at), values)
			return d.u.Size, err
		}
		for at := 0; at < len(b) && at < 256; at++ {
			n, end, ok := d.skimOne(b[at:], cf)
			size, err := frame(at, false)
			flags := b[at]
			switch {
			case flags == FlagEndOfPartition:
				if !ok || !end || n != 1 || err != nil || size != 1 {
					t.Fatalf("at %d: end byte: skimOne %d %v %v, scanFrame %d %v", at, n, end, ok, size, err)
				}
			case flags&(FlagEndOfPartition|FlagIsMarker|FlagExtension) != 0:
				if ok {
					t.Fatalf("at %d: skimOne took flags 0x%02x", at, flags)
				}
			default:
				fits := err == nil && size <= int64(len(b)-at)
				if ok != fits || ok && int64(n) != size || end {
					t.Fatalf("at %d: skimOne %d %v %v, scanFrame %d %v (%d bytes left)", at, n, end, ok, size, err, len(b)-at)
				}
			}
		}
		if d.fixedWidth >= 0 {
			n, rows, end := skimFixedWindow(b, d.fixedWidth)
			p := 0
			for i := int64(0); i < rows; i++ {
				size, err := frame(p, false)
				if err != nil || d.u.Kind != KindRow || d.u.Flags&FlagExtension != 0 {
					t.Fatalf("row %d at %d: skimFixedWindow stepped over it, scanFrame: %v", i, p, err)
				}
				p += int(size)
			}
			if end {
				if size, err := frame(p, false); err != nil || size != 1 || b[p] != FlagEndOfPartition {
					t.Fatalf("end at %d: scanFrame %d %v", p, size, err)
				}
				p++
			}
			if p != n {
				t.Fatalf("skimFixedWindow consumed %d, scanFrame's rows add up to %d", n, p)
			}
		}
		fd := NewDecoder(NewBytesSource(b, 0), s)
		fd.inPartition, fd.win = true, b
		if fd.fastRow() {
			u := fd.u.Clone()
			size, err := frame(0, true)
			if err != nil || size != u.Size || d.u.PrevSize != u.PrevSize || d.u.Flags != u.Flags || d.u.Kind != u.Kind ||
				len(d.u.Clustering) != len(u.Clustering) {
				t.Fatalf("fastRow %+v, scanFrame size %d err %v %+v", u, size, err, &d.u)
			}
			for i := range u.Clustering {
				if !bytes.Equal(u.Clustering[i], d.u.Clustering[i]) {
					t.Fatalf("clustering %d: fastRow %x, scanFrame %x", i, u.Clustering[i], d.u.Clustering[i])
				}
			}
		}
	})
}

// The layout of every unfiltered covers its bytes exactly, in order, on
// arbitrary input, and recording it changes nothing the decoder returns.
func FuzzLayoutTiles(f *testing.F) {
	f.Add([]byte{0, 1, 'k', 0x80, 0x24, 0, 4, 0, 0, 0, 0, 1}, false)
	f.Add([]byte{0, 1, 'k', 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0x6c, 0, 1, 'c', 31, 0,
		5, 6, 7,
		0x03, 7, 9, 10, 1, 2, 3, 4,
		0x05, 6, 2,
		3, 4, 2,
		0x18, 1, 'p', 1, 'v',
		0x02, 0x81, 0, 3, 4, 1, 'q', 0,
		1}, true)
	f.Fuzz(func(t *testing.T, b []byte, legacy bool) {
		v := "oa"
		if legacy {
			v = "me"
		}
		s := &Schema{Version: format.MustVersion(v), ClusteringFixed: []int{-1},
			Static:  []Column{{Name: "st", Fixed: -1}},
			Regular: []Column{{Name: "a", Fixed: 4}, {Name: "b", Fixed: -1}, {Name: "s", Fixed: -1, Complex: true}}}
		plain := NewDecoder(NewBytesSource(b, 0), s)
		SlowOnly(plain)
		lay := NewDecoder(NewBytesSource(b, 0), s)
		lay.RecordLayout()
		check := func(spans []Span, from, to int64) {
			t.Helper()
			pos := from
			for _, sp := range spans {
				if sp.Off != pos || sp.Len <= 0 || sp.Kind >= numSpanKinds {
					t.Fatalf("span %+v, expected one at %d (fields of [%d, %d))", sp, pos, from, to)
				}
				pos = sp.End()
			}
			if pos != to {
				t.Fatalf("spans end at %d, the field at %d", pos, to)
			}
		}
		var h1, h2 PartitionHeader
		for i := 0; i < 20; i++ {
			err1 := plain.ReadPartitionHeader(&h1)
			err2 := lay.ReadPartitionHeader(&h2)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("header: %v without layout, %v with", err1, err2)
			}
			if err1 != nil {
				return
			}
			check(lay.Layout(), h2.Offset, h2.Offset+int64(h2.Size))
			for {
				u1, err1 := plain.Next(false)
				at := lay.Pos()
				u2, err2 := lay.Next(false)
				if (err1 == nil) != (err2 == nil) || (u1 == nil) != (u2 == nil) {
					t.Fatalf("unfiltered: %v %v without layout, %v %v with", u1, err1, u2, err2)
				}
				if err1 != nil {
					if err1.Error() != err2.Error() {
						t.Fatalf("errors differ: %v / %v", err1, err2)
					}
					return
				}
				if u1 == nil {
					check(lay.Layout(), at, at+1)
					break
				}
				if u1.Offset != u2.Offset || u1.Size != u2.Size || len(u1.Cells) != len(u2.Cells) {
					t.Fatalf("layout mode decoded %+v, without %+v", u2, u1)
				}
				check(lay.Layout(), u2.Offset, u2.Offset+u2.Size)
			}
		}
	})
}
