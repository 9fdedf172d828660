package convert

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/reader"
)

// sameFramesBetween is sameContentBetween for an output the relinker
// wrote from a: it compares what the relinker keeps, byte for byte, rather
// than cell by cell. The relinker copies every unfiltered's flags,
// clustering and body verbatim and re-encodes only the partition header
// and the size fields (relink.go), so the output holds a's content exactly
// when every partition's key and deletion are a's (the deletion capped
// when capTo is set), every unfiltered's kind, flags and clustering bytes
// are a's (a ScyllaDB shadowable deletion's flags as Cassandra spells it)
// and every body's bytes are a's, read with the same serialization
// header (checkConverted takes this path only when bodiesReadAlike); the
// source's cells were decoded by the statistics collection during the
// rewrite. Decoding neither side's cells
// is what makes this cheaper than sameContentBetween (a flags byte and
// vints per cell, twice); a difference found is described by
// sameContentBetween, from the same boundary.
func sameFramesBetween(a, b *sstable.SSTable, from boundary, to *boundary, capTo *deletiontime.Layout) error {
	ca, cb := a.Data().Cursor(from.a), b.Data().Cursor(from.b)
	da, db := rows.NewDecoder(ca, a.Schema()), rows.NewDecoder(cb, b.Schema())
	da.SetFile(a.Data().Path())
	db.SetFile(b.Data().Path())
	err := compareFrames(ca, cb, da, db, from, to, capTo)
	var diff *frameDiff
	if !errors.As(err, &diff) {
		return err
	}
	if described := sameContentBetween(a, b, from, to, capTo); described != nil {
		return described
	}
	return err
}

// frameDiff is a difference compareFrames found, before it is described.
type frameDiff struct{ msg string }

func (d *frameDiff) Error() string { return d.msg }

func differs(format string, args ...any) error {
	return &frameDiff{fmt.Sprintf(format, args...)}
}

// compareFrames walks both Data.db streams from from, partition by
// partition and unfiltered by unfiltered, to to (nil: the end of both).
func compareFrames(ca, cb *reader.Cursor, da, db *rows.Decoder, from boundary, to *boundary, capTo *deletiontime.Layout) error {
	var ha, hb rows.PartitionHeader
	var scratch []byte // a prefix whose flags the relinker rewrites
	for n := from.n; ; n++ {
		if to != nil && n == to.n {
			if ca.Pos() != to.a || cb.Pos() != to.b {
				return fmt.Errorf("partition %d starts at byte %d of the source and %d of the output, expected %d and %d", n, ca.Pos(), cb.Pos(), to.a, to.b)
			}
			return nil
		}
		errA, errB := da.ReadPartitionHeader(&ha), db.ReadPartitionHeader(&hb)
		endA, endB := errors.Is(errA, io.EOF), errors.Is(errB, io.EOF)
		switch {
		case endA && endB:
			if to != nil {
				return fmt.Errorf("both sstables end after %d partitions, before partition %d", n, to.n)
			}
			return nil
		case endA || endB:
			return differs("partition %d: one sstable ends before the other", n)
		case errA != nil:
			return errA
		case errB != nil:
			return errB
		}
		want := ha.Deletion
		if capTo != nil {
			want, _ = deletiontime.Cap(want, *capTo)
		}
		if !bytes.Equal(ha.Key, hb.Key) || want != hb.Deletion {
			return differs("partition %d: header differs: key %x deletion %+v vs key %x deletion %+v", n, ha.Key, ha.Deletion, hb.Key, hb.Deletion)
		}
		for i := 0; ; i++ {
			fa, pa, err := da.NextFrame()
			if err != nil {
				return err
			}
			fb, pb, err := db.NextFrame()
			if err != nil {
				return err
			}
			if fa == nil || fb == nil {
				if fa != fb {
					return differs("partition %x: one has more unfiltereds than the other after %d", ha.Key, i)
				}
				break
			}
			want := pa
			if fa.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
				scratch = cassandraShadowablePrefix(scratch, pa)
				want = scratch
			}
			if fa.Kind != fb.Kind || !bytes.Equal(want, pb) || fa.BodyLen() != fb.BodyLen() {
				return differs("partition %x, unfiltered %d (source byte %d, output byte %d) differs in its flags, clustering or size", ha.Key, i, fa.Offset, fb.Offset)
			}
			if same, err := sameBytesAhead(ca, cb, fa.BodyLen()); err != nil {
				return err
			} else if !same {
				return differs("partition %x, unfiltered %d (source byte %d, output byte %d) differs in its body", ha.Key, i, fa.Offset, fb.Offset)
			}
		}
	}
}

// sameBytesAhead consumes the next n bytes of both cursors (fewer after a
// difference) and reports whether they are the same, comparing what each holds decompressed in
// place (a stretch that spans chunks on one side is copied only then).
func sameBytesAhead(ca, cb *reader.Cursor, n int64) (bool, error) {
	for n > 0 {
		k := int(min(n, 64<<10))
		if h := len(ca.Buffered()); h > 0 {
			k = min(k, h)
		}
		if h := len(cb.Buffered()); h > 0 {
			k = min(k, h)
		}
		x, err := ca.Next(k)
		if err != nil {
			return false, err
		}
		// x stays valid: the other cursor holds its own chunk.
		y, err := cb.Next(k)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(x, y) {
			return false, nil
		}
		n -= int64(k)
	}
	return true, nil
}
