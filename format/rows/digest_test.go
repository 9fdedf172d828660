package rows

import (
	"math/rand/v2"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// TestDigest: a body hashed whole is hashed as in DigestPiece pieces (the
// tap's and FrameBody's ways); a byte changed anywhere, a frame moved, a
// deletion or a key changed give another sum; partitions summed in
// another order (segments) give the same.
func TestDigest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	body := make([]byte, 3*DigestPiece+123)
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
					n := min(len(b), DigestPiece)
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
	for _, at := range []int{0, DigestPiece - 1, DigestPiece, len(body) - 1} {
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
