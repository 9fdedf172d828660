package rows

import (
	"math/rand/v2"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
)

// TestDigest: a body hashed whole is hashed as in digestPiece pieces (the
// tap's and FrameBody's ways); a byte changed anywhere, a frame moved, a
// deletion or a key changed give another sum; partitions summed in
// another order (segments) give the same.
func TestDigest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	body := make([]byte, 3*digestPiece+123)
	for i := range body {
		body[i] = byte(rnd.Uint32())
	}
	del := deletiontime.DeletionTime{MarkedForDeleteAt: 7, LocalDeletionTime: 9}
	type frame struct{ prefix, body []byte }
	sum := func(keys []string, dels []deletiontime.DeletionTime, frames [][]frame, pieces bool) Digest {
		var d Digest
		for i, k := range keys {
			d.Partition([]byte(k), dels[i])
			for _, f := range frames[i] {
				d.Frame(f.prefix, int64(len(f.body)))
				if !pieces {
					d.Body(f.body)
					continue
				}
				for b := f.body; len(b) > 0; {
					n := min(len(b), digestPiece)
					d.Body(b[:n])
					b = b[n:]
				}
			}
			d.End()
		}
		return d
	}
	a := []frame{{[]byte{0x04, 1, 2}, body}, {[]byte{0x24}, []byte("x")}}
	b := []frame{{[]byte{0x04}, []byte("short")}}
	keys, dels := []string{"k1", "k2"}, []deletiontime.DeletionTime{deletiontime.Live, del}
	want := sum(keys, dels, [][]frame{a, b}, false)
	if got := sum(keys, dels, [][]frame{a, b}, true); !got.Same(&want) {
		t.Error("a body hashed in pieces differs from the body hashed whole")
	}
	if got := sum([]string{"k2", "k1"}, []deletiontime.DeletionTime{del, deletiontime.Live}, [][]frame{b, a}, false); !got.Same(&want) {
		t.Error("the same partitions summed in another order differ")
	}
	if want.Partitions() != 2 {
		t.Errorf("%d partitions, want 2", want.Partitions())
	}
	differ := func(name string, got Digest) {
		t.Helper()
		if got.Same(&want) {
			t.Errorf("%s: the same digest", name)
		}
	}
	for _, at := range []int{0, digestPiece - 1, digestPiece, len(body) - 1} {
		changed := append([]byte(nil), body...)
		changed[at] ^= 1
		differ("a body byte changed", sum(keys, dels, [][]frame{{{a[0].prefix, changed}, a[1]}, b}, true))
	}
	differ("frames swapped", sum(keys, dels, [][]frame{{a[1], a[0]}, b}, false))
	differ("a frame moved to the next partition", sum(keys, dels, [][]frame{{a[0]}, {a[1], b[0]}}, false))
	differ("a prefix changed", sum(keys, dels, [][]frame{{{[]byte{0x04, 1, 3}, body}, a[1]}, b}, false))
	differ("a deletion changed", sum(keys, []deletiontime.DeletionTime{del, del}, [][]frame{a, b}, false))
	differ("a key changed", sum([]string{"k1", "k3"}, dels, [][]frame{a, b}, false))
	differ("a partition missing", sum(keys[:1], dels, [][]frame{a}, false))
}

// windowSource shows at most the rest of the current window of w bytes
// in Buffered, as a cursor shows the rest of the chunk in memory.
type windowSource struct {
	*BytesSource
	w int
}

func (s windowSource) Buffered() []byte {
	b := s.BytesSource.Buffered()
	if n := s.w - s.pos%s.w; n < len(b) {
		b = b[:n]
	}
	return b
}

// FuzzDigestRestMatchesFrames: DigestRest, which hashes the frames that
// lie wholly in the window where they lie, takes the digest NextFrame and
// FrameBody take frame by frame (the decoder's slow path), and fails where
// they fail, for any partition body and any window width.
func FuzzDigestRestMatchesFrames(f *testing.F) {
	f.Add([]byte{0x24, 0, 4, 0, 0, 0, 0, 1}, true, uint8(3))
	f.Add([]byte{0x24, 0, 2, 'a', 'b', 0, 0, 0, 1, 3, 5, 0,
		0x02, 1, 0, 2, 0, 1, 'c', 0, 0, 0, 2, 3, 0,
		0x80, 0x01, 0x20, 2, 0, 5, 0,
		0x01}, false, uint8(7))
	// The same in one window: every frame hashed where it lies.
	f.Add([]byte{0x24, 0, 2, 'a', 'b', 0, 0, 0, 1, 3, 5, 0,
		0x02, 1, 0, 2, 0, 1, 'c', 0, 0, 0, 2, 3, 0,
		0x80, 0x01, 0x20, 2, 0, 5, 0,
		0x01}, false, uint8(63))
	f.Fuzz(func(t *testing.T, b []byte, fixedClustering bool, window uint8) {
		cf := []int{-1, 4}
		if fixedClustering {
			cf = []int{8, 4}
		}
		s := &Schema{Version: format.MustVersion("oa"), ClusteringFixed: cf,
			Static:  []Column{{Name: "st", Fixed: -1}},
			Regular: []Column{{Name: "a", Fixed: 4}, {Name: "b", Fixed: -1}}}
		in, err := AppendPartitionHeader(nil, []byte("key"), s.Version.DeletionTimeLayout(), deletiontime.Live)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, b...)
		digest := func(slow bool) (Digest, error) {
			var dg Digest
			d := NewDecoder(windowSource{NewBytesSource(in, 0), int(window)%64 + 1}, s)
			d.slowOnly = slow
			var h PartitionHeader
			if err := d.ReadPartitionHeader(&h); err != nil {
				t.Fatal(err)
			}
			dg.Partition(h.Key, h.Deletion)
			err := d.DigestRest(&dg)
			if err == nil {
				dg.End()
			}
			return dg, err
		}
		want, wantErr := digest(true)
		got, err := digest(false)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("DigestRest: %v; frame by frame: %v", err, wantErr)
		}
		if err == nil && !got.Same(&want) {
			t.Fatal("DigestRest's digest is not the frames'")
		}
	})
}
