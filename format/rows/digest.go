package rows

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// Digest sums a hash of each partition's content as its frames store it:
// the key, the partition deletion, and each unfiltered's flags, clustering
// (or bound) and body bytes, in order. What a rewrite may change without
// changing the content is left out: positions, the DeletionTime's layout,
// and the size and previous-size fields. Two Data.db streams whose bodies
// read alike (the same serialization header) hold the same content when
// their digests are equal and each holds its partitions in order with
// no key twice: the sum makes the digest independent of how a walk is cut
// into segments, and the order check of the walk makes it a sequence.
//
// Byte strings are hashed with hash/maphash, seeded once per process (a
// digest is compared only with another taken in the same process, the
// writer's with the verifier's, never stored), a body in pieces of
// digestPiece bytes, strings of 16 bytes or fewer folded in as words
// (hashBytes); the hashes and the numbers between them are chained by a
// multiply-and-fold mixer (maphash.Hash's streaming Write copies each
// short write into its buffer first, and a small partition is mostly
// short writes).
type Digest struct {
	state      uint64
	sum        uint64
	partitions int64
	bodyAt     int // where the current body stands in its piece
}

// digestPiece is the width of the pieces a body is hashed in.
const digestPiece = 64 << 10

var digestSeed = maphash.MakeSeed()

// chain mixes v into h: the two halves of a 64×64-bit product folded
// (wyhash's mixer), one multiplication an item. End mixes the result once
// more (finish) before adding it to the sum.
func chain(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}

// hashBytes chains the byte string b into h: its maphash.Bytes, or for
// one of 16 bytes or fewer (a small partition's key, flags, clustering
// and body) its length and its bytes as two words, which costs a
// fraction of a maphash call.
func hashBytes(h uint64, b []byte) uint64 {
	if len(b) > 16 {
		return chain(h, maphash.Bytes(digestSeed, b))
	}
	var w [16]byte
	copy(w[:], b)
	h = chain(h, uint64(len(b))|1<<63)
	h = chain(h, binary.LittleEndian.Uint64(w[:8]))
	return chain(h, binary.LittleEndian.Uint64(w[8:]))
}

// finish is SplitMix64's finalizer.
func finish(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Partition starts a partition: its key and deletion.
func (d *Digest) Partition(key []byte, del deletiontime.DeletionTime) {
	h := chain(hashBytes(0, key), uint64(del.MarkedForDeleteAt))
	d.state = chain(h, uint64(del.LocalDeletionTime))
}

// Frame takes an unfiltered's flags and clustering or bound (the bytes
// before its size field) and its body's length; the body follows through
// Body.
func (d *Digest) Frame(prefix []byte, bodyLen int64) {
	d.state = chain(hashBytes(d.state, prefix), uint64(bodyLen))
	d.bodyAt = 0
}

// Unfiltered takes an unfiltered's frame and its whole body: Frame then
// Body. It is the Tap a digest of decoded rows takes (SetTap).
func (d *Digest) Unfiltered(prefix, body []byte) {
	d.Frame(prefix, int64(len(body)))
	d.Body(body)
}

// Body takes the next bytes of the current unfiltered's body: the rest of
// it, or a piece that ends digestPiece bytes (or a multiple) into it.
func (d *Digest) Body(b []byte) {
	for len(b) > 0 {
		k := min(len(b), digestPiece-d.bodyAt)
		d.state = hashBytes(d.state, b[:k])
		d.bodyAt = (d.bodyAt + k) % digestPiece
		b = b[k:]
	}
}

// End closes the partition and adds its hash to the sum.
func (d *Digest) End() {
	d.sum += finish(d.state)
	d.partitions++
}

// Add adds another digest's partitions (a segment's) to d's.
func (d *Digest) Add(o *Digest) {
	d.sum += o.sum
	d.partitions += o.partitions
}

// Reset empties d for another walk.
func (d *Digest) Reset() { d.sum, d.partitions = 0, 0 }

// Partitions is the number of partitions summed.
func (d *Digest) Partitions() int64 { return d.partitions }

// Same reports whether d and o summed the same number of partitions to the
// same value.
func (d *Digest) Same(o *Digest) bool { return d.sum == o.sum && d.partitions == o.partitions }

// Tap is called for each unfiltered the decoder reads with its body (see
// SetTap): its flags and clustering or bound, and its body.
type Tap func(prefix, body []byte)

// SetTap has the decoder hand every unfiltered it decodes with its body
// (Next(false), and markers under Next(true)) to tap, nil to stop: a
// verifier taking a Digest of what it decodes. NextFrame does not call it.
func (d *Decoder) SetTap(tap Tap) { d.tap = tap }

// DigestRest reads the rest of the partition into dg, frame by frame, as
// NextFrame and FrameBody do: a frame wholly inside the chunk in memory
// is hashed where it lies, with no call on the source (a third of the
// verifier's walk of a table of small rows went to those calls);
// anything else, a damaged frame included, goes through NextFrame.
func (d *Decoder) DigestRest(dg *Digest) error {
	if !d.inPartition {
		return errors.New("rows: DigestRest called outside a partition")
	}
	for {
		if d.buffered != nil && d.lay == nil && !d.slowOnly {
			if len(d.win) == 0 {
				if err := d.sync(); err != nil {
					return err
				}
				d.win = d.buffered.Buffered()
				d.winOff = d.src.Pos()
			}
			for len(d.win) > 0 {
				d.u.reset()
				sizeAt, _, bodyAt, err := d.scanFrame(d.win, d.winOff, false)
				n := d.u.Size
				if err != nil || n > int64(len(d.win)) {
					break
				}
				if d.u.Flags == FlagEndOfPartition {
					d.win, d.winOff, d.pending = d.win[1:], d.winOff+1, d.pending+1
					d.inPartition = false
					return d.sync()
				}
				dg.Unfiltered(d.win[:sizeAt], d.win[bodyAt:n])
				d.prevStart = d.winOff
				d.win, d.winOff, d.pending = d.win[n:], d.winOff+n, d.pending+n
			}
		}
		f, prefix, err := d.NextFrame()
		if err != nil || f == nil {
			return err
		}
		dg.Frame(prefix, f.BodyLen())
		if err := d.FrameBody(dg.Body); err != nil {
			return err
		}
	}
}

// FrameBody consumes the body of the unfiltered NextFrame just returned,
// handing it to each in pieces of digestPiece bytes but the last, each
// valid only during the call.
func (d *Decoder) FrameBody(each func([]byte)) error {
	n := d.bodyLeft
	d.bodyLeft = 0
	for n > 0 {
		k := min(n, digestPiece)
		b, err := d.src.Next(int(k))
		if err != nil {
			return d.fail(d.src.Pos(), fmt.Sprintf("an unfiltered body of %d more bytes", n), err)
		}
		each(b)
		n -= k
	}
	return nil
}
