package rows

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"

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
// The hash is hash/maphash, seeded once per process: a digest is compared
// only with another taken in the same process (the writer's with the
// verifier's), never stored.
type Digest struct {
	h          maphash.Hash
	seeded     bool
	sum        uint64
	partitions int64
	scratch    [2 * binary.MaxVarintLen64]byte
}

var digestSeed = maphash.MakeSeed()

// Partition starts a partition: its key and deletion.
func (d *Digest) Partition(key []byte, del deletiontime.DeletionTime) {
	if !d.seeded {
		d.h.SetSeed(digestSeed)
		d.seeded = true
	} else {
		d.h.Reset()
	}
	b := binary.AppendUvarint(d.scratch[:0], uint64(len(key)))
	_, _ = d.h.Write(b)
	_, _ = d.h.Write(key)
	b = binary.LittleEndian.AppendUint64(d.scratch[:0], uint64(del.MarkedForDeleteAt))
	b = binary.LittleEndian.AppendUint64(b, uint64(del.LocalDeletionTime))
	_, _ = d.h.Write(b)
}

// Frame takes an unfiltered's flags and clustering or bound (the bytes
// before its size field) and its body's length; the body follows through
// Body, in one or more pieces.
func (d *Digest) Frame(prefix []byte, bodyLen int64) {
	b := binary.AppendUvarint(d.scratch[:0], uint64(len(prefix)))
	_, _ = d.h.Write(b)
	_, _ = d.h.Write(prefix)
	b = binary.AppendUvarint(d.scratch[:0], uint64(bodyLen))
	_, _ = d.h.Write(b)
}

// Body takes the next bytes of the current unfiltered's body.
func (d *Digest) Body(b []byte) { _, _ = d.h.Write(b) }

// End closes the partition and adds its hash to the sum.
func (d *Digest) End() {
	_ = d.h.WriteByte(FlagEndOfPartition)
	d.sum += d.h.Sum64()
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

// FrameBody consumes the body of the unfiltered NextFrame just returned,
// handing it to each in pieces (of up to 64 KiB, each valid only during
// the call).
func (d *Decoder) FrameBody(each func([]byte)) error {
	n := d.bodyLeft
	d.bodyLeft = 0
	for n > 0 {
		k := min(n, 64<<10)
		b, err := d.src.Next(int(k))
		if err != nil {
			return d.fail(d.src.Pos(), fmt.Sprintf("an unfiltered body of %d more bytes", n), err)
		}
		each(b)
		n -= k
	}
	return nil
}
