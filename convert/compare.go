package convert

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/verify"
)

// verifyOutput checks the written output: verify's checks (every
// checksum and the structure) must pass and its content must equal the
// source's, partition by partition, unfiltered by unfiltered, cell by
// cell.
func verifyOutput(src *sstable.SSTable, data string, o Options, res *Result) error {
	defer func() { res.keys = nil }() // a node's upgrade keeps every result
	rep, _, cmpErr := checkConverted(src, data, o, res)
	return checkWritten("converted "+src.Path(format.ComponentData), rep, cmpErr, res)
}

// checkConverted returns verify's report on the output and the verdict of
// its comparison with the source (and, for the tests, the follower, nil
// where none rode). When the output's rows read as the source's
// (bodiesReadAlike: the relinker copies every row body, and the
// serialization header they are read with is the source's), and the
// relinker changed no frame (no deletion capped, no flags rewritten), the
// comparison is of digests (checkDigests): the source's, taken as the
// statistics collection decoded it, against the output's, taken by
// verify's walk (verify.SSTableWritten), which reads the output's frames
// and bodies instead of stepping over them; neither side is read again.
// Where frames changed, what the relinker kept is compared byte for byte
// (sameFramesBetween), in two halves at once (compareWith), beside
// verify's walk by row sizes. A trie-indexed output is compared so too,
// by frames or cell by cell. Otherwise the comparison rides on verify's
// walk (checkFollowed), which decodes the output once.
func checkConverted(src *sstable.SSTable, data string, o Options, res *Result) (*verify.Report, *sourceFollower, error) {
	byFrames := bodiesReadAlike(src, res)
	if byFrames && res.content != nil && res.Counts.Capped == 0 && !res.reflagged {
		rep, err := checkDigests(src, data, o, res)
		return rep, nil, err
	}
	if !byFrames && !o.To.IsBTI() {
		return checkFollowed(src, data, o, res)
	}
	opts := sstable.Options{Access: o.Access}
	repc := make(chan *verify.Report, 1)
	// The comparison checks the output's keys against the source's, which
	// the filter written was built from: Filter.db is checked against it.
	go func() { repc <- verify.SSTableWritten(data, opts, verify.Written{Keys: res.keys}) }()
	cmpErr := compareWith(src, data, o, middle(res.segments), byFrames)
	return <-repc, nil, cmpErr
}

// checkDigests verifies the output and compares the digest of its content
// (rows.Digest) with the source's. Equal digests over the same number of
// partitions, with the output's keys in order (verify checks it), mean
// the same partitions in the same order: the same keys and deletions, and
// the same flags, clusterings and body bytes in every unfiltered, which
// the same serialization header reads as the same cells. The keys the
// filter was built from are then the source's too. A difference is
// found and described by comparing the two sstables frame by frame.
func checkDigests(src *sstable.SSTable, data string, o Options, res *Result) (*verify.Report, error) {
	var out rows.Digest
	rep := verify.SSTableWritten(data, sstable.Options{Access: o.Access}, verify.Written{Keys: res.keys, Content: &out})
	if !rep.OK() || out.Same(res.content) {
		return rep, nil // a damaged output: the problems are the verdict
	}
	if err := compareWith(src, data, o, middle(res.segments), true); err != nil {
		return rep, err
	}
	return rep, fmt.Errorf("the output's content digest (%d partitions) differs from the source's (%d partitions), yet no frame differs", out.Partitions(), res.content.Partitions())
}

// bodiesReadAlike reports whether the output's row bodies, copied from the
// source's, read as the source's: Statistics.db's serialization header
// gives them the same minima (the deltas' bases), the same columns and
// the same types. A rewrite that changed any of them (unused minima
// written as the epochs, a frozen UDT's type renamed) is compared cell by
// cell.
func bodiesReadAlike(src *sstable.SSTable, res *Result) bool {
	a := src.Stats().Header
	if res.stats == nil || res.stats.Header == nil || a == nil {
		return false
	}
	b := res.stats.Header
	return a.MinTimestamp == b.MinTimestamp && a.MinLocalDeletionTime == b.MinLocalDeletionTime && a.MinTTL == b.MinTTL &&
		reflect.DeepEqual(a.KeyType, b.KeyType) && reflect.DeepEqual(a.ClusteringTypes, b.ClusteringTypes) &&
		reflect.DeepEqual(a.StaticColumns, b.StaticColumns) && reflect.DeepEqual(a.RegularColumns, b.RegularColumns)
}

// checkFollowed is checkConverted with the comparison riding on verify's
// walk (verify.SSTableFollowed), which decodes every unfiltered of the
// output and hands it to a sourceFollower; the source is decoded beside
// it, a segment of the walk at a time.
func checkFollowed(src *sstable.SSTable, data string, o Options, res *Result) (*verify.Report, *sourceFollower, error) {
	opts := sstable.Options{Access: o.Access}
	f := &sourceFollower{src: src, capTo: cappedTo(o), segments: res.segments}
	rep := verify.SSTableFollowed(data, opts, f)
	if !rep.OK() {
		return rep, f, nil // the output is damaged: that is the verdict
	}
	if followed, err := f.result(res.DataUncompressed.After); followed {
		return rep, f, err
	}
	// verify's walk was not cut where the rewrite said it would be: compare
	// on its own, so that nothing goes uncompared.
	f.alone = true
	return rep, f, compareWith(src, data, o, middle(res.segments), false)
}

// cappedTo is the layout the source's partition deletions were capped to
// (--cap-deletion-times: a deletion the output layout cannot hold was
// capped on purpose, and is compared capped), nil when none was.
func cappedTo(o Options) *deletiontime.Layout {
	if !o.CapDeletionTimes {
		return nil
	}
	l := o.To.DeletionTimeLayout()
	return &l
}

// sourceFollower compares the output with the source as verify's walk
// decodes the output (a verify.Follower): each segment of the walk is
// compared by a partitionComparer, with the source's partitions from the
// one the rewrite wrote at the segment's start (Result.segments); the
// segments are taken in order, and each must begin where the one before
// ended, in both sstables, so that every partition of both is compared
// once. A segment the rewrite did not record (a walk cut otherwise) is
// not compared, and then nothing is taken as followed.
type sourceFollower struct {
	src      *sstable.SSTable
	capTo    *deletiontime.Layout
	segments []boundary
	serial   *partitionComparer // the walk's part on the calling goroutine
	decoders sync.Pool          // the source's, moved from segment to segment
	// Taken in order:
	next     boundary // where the next segment must begin
	err      error    // the first difference
	lost     bool     // a segment was not compared, or did not follow
	parallel int      // segments taken that a worker compared
	alone    bool     // not followed: compared on its own (compareWith)
}

func (f *sourceFollower) Segment(seg sstable.Segment) verify.SegmentReader {
	if seg.Serial {
		// One decoder walks on from here: so does the source's.
		if f.serial == nil {
			f.serial = newComparer(f.src, f.next, f.capTo)
			f.serial.lost = seg.Start != f.next.b
		}
		f.serial.from = f.serial.at
		return f.serial
	}
	from := boundary{}
	if seg.Start != 0 {
		i, found := slices.BinarySearchFunc(f.segments, seg.Start, func(b boundary, pos int64) int { return cmp.Compare(b.b, pos) })
		if !found {
			return &partitionComparer{lost: true}
		}
		from = f.segments[i]
	}
	dec, _ := f.decoders.Get().(*rows.Decoder)
	return &partitionComparer{capTo: f.capTo, dec: f.src.DecoderAt(dec, from.a), from: from, at: from}
}

func (f *sourceFollower) Take(r verify.SegmentReader) {
	c := r.(*partitionComparer)
	if c != f.serial && c.dec != nil {
		defer f.decoders.Put(c.dec)
	}
	switch {
	case f.err != nil || f.lost:
	case c.lost || c.from != f.next:
		f.lost = true
	case c.err != nil:
		f.err = c.err
	default:
		f.next = c.at
		if c != f.serial {
			f.parallel++
		}
	}
}

// result is the comparison's verdict once the walk is through: whether
// the segments taken followed one another over the whole output
// (outLength bytes of Data.db), and the first difference, or the source's
// partitions past the output's last.
func (f *sourceFollower) result(outLength int64) (bool, error) {
	switch {
	case f.err != nil:
		return true, f.err
	case f.lost || f.next.b != outLength:
		return false, nil
	}
	return true, newComparer(f.src, f.next, f.capTo).sourceEnds()
}

// partitionComparer compares the output's partitions, as something
// decodes them (verify's walk, or sameContentBetween's decoder), with the
// source's, which it decodes itself from a boundary on. It stops at the
// first difference.
type partitionComparer struct {
	capTo    *deletiontime.Layout
	dec      *rows.Decoder // the source's
	from, at boundary      // where it began, and where it stands
	h        rows.PartitionHeader
	i        int   // the unfiltereds of the partition compared
	err      error // the first difference
	lost     bool  // not compared: where it begins is not known
}

func newComparer(src *sstable.SSTable, from boundary, capTo *deletiontime.Layout) *partitionComparer {
	return &partitionComparer{capTo: capTo, dec: src.Decoder(from.a), from: from, at: from}
}

// Partition compares the output's next partition header with the
// source's.
func (c *partitionComparer) Partition(hb *rows.PartitionHeader) {
	if c.err != nil || c.lost {
		return
	}
	ha := &c.h
	if err := c.dec.ReadPartitionHeader(ha); errors.Is(err, io.EOF) {
		c.err = fmt.Errorf("partition %d: one sstable ends before the other", c.at.n)
		return
	} else if err != nil {
		c.err = err
		return
	}
	want := ha.Deletion
	if c.capTo != nil {
		want, _ = deletiontime.Cap(want, *c.capTo)
	}
	if !bytes.Equal(ha.Key, hb.Key) || want != hb.Deletion {
		c.err = fmt.Errorf("partition %d: header differs: key %x deletion %+v vs key %x deletion %+v", c.at.n, ha.Key, ha.Deletion, hb.Key, hb.Deletion)
	}
	c.i = 0
}

// Unfiltered compares the output's next unfiltered with the source's.
func (c *partitionComparer) Unfiltered(ub *rows.Unfiltered) {
	if c.err != nil || c.lost {
		return
	}
	ua, err := c.dec.Next(false)
	switch {
	case err != nil:
		c.err = err
	case ua == nil:
		c.err = fmt.Errorf("partition %x: one has more unfiltereds than the other after %d", c.h.Key, c.i)
	case !SameUnfiltered(ua, ub):
		c.err = fmt.Errorf("partition %x, unfiltered %d (source byte %d) differs:\n%s", c.h.Key, c.i, ua.Offset, DescribeDiff(ua, ub))
	}
	c.i++
}

// End ends the partition, which the source's must end with too; pos is
// where the output's next partition starts.
func (c *partitionComparer) End(pos int64) {
	if c.err != nil || c.lost {
		return
	}
	ua, err := c.dec.Next(false)
	switch {
	case err != nil:
		c.err = err
	case ua != nil:
		c.err = fmt.Errorf("partition %x: one has more unfiltereds than the other after %d", c.h.Key, c.i)
	default:
		c.at = boundary{a: c.dec.Source().Pos(), b: pos, n: c.at.n + 1}
	}
}

// sourceEnds reports the source's partitions past where the comparer
// stands, which the output has ended before.
func (c *partitionComparer) sourceEnds() error {
	err := c.dec.ReadPartitionHeader(&c.h)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("partition %d: one sstable ends before the other", c.at.n)
}

// compareWith compares src with the output on its own, in two halves at
// once split at cut (a partition boundary the rewrite recorded near the
// middle); a zero cut compares in one pass. The cut is only a hint: the
// first half must reach it in both sstables after exactly cut.n whole
// partitions, so a wrong cut fails the comparison and never skips
// content. byFrames compares what the relinker kept (sameFramesBetween),
// otherwise every cell (sameContentBetween).
func compareWith(src *sstable.SSTable, data string, o Options, cut boundary, byFrames bool) error {
	out, err := sstable.Open(data, sstable.Options{Access: o.Access})
	if err != nil {
		return fmt.Errorf("reopening the output: %w", err)
	}
	defer out.Close()
	capTo := cappedTo(o)
	between := sameContentBetween
	if byFrames {
		between = sameFramesBetween
	}
	if cut.n == 0 {
		return between(src, out, boundary{}, nil, capTo)
	}
	// Data and its decompressors are safe for concurrent use; each half
	// has its own cursors.
	second := make(chan error, 1)
	go func() { second <- between(src, out, cut, nil, capTo) }()
	err = between(src, out, boundary{}, &cut, capTo)
	if err2 := <-second; err == nil {
		err = err2
	}
	return err
}

// middle is the segment boundary nearest the middle of the output.
func middle(segments []boundary) boundary {
	if len(segments) == 0 {
		return boundary{}
	}
	return segments[len(segments)/2]
}

// boundary is the start of the same partition in two sstables: its
// Data.db position in each and the number of partitions before it.
type boundary struct{ a, b, n int64 }

// SameContent decodes both sstables completely and reports the first
// difference in content: partition keys and deletions, rows, markers,
// liveness, deletions and every cell. Positions and the size fields that a
// conversion legitimately changes are not content.
func SameContent(a, b *sstable.SSTable) error {
	return sameContentBetween(a, b, boundary{}, nil, nil)
}

// sameContentBetween compares the partitions from one boundary to the next
// (nil: to the end of both), b decoded here and compared by a
// partitionComparer reading a. Reaching to is checked, not assumed: after
// to.n partitions both decoders must stand exactly at to's positions.
// capTo, when set, is the layout a's partition deletions were capped to
// (deletiontime.Cap).
func sameContentBetween(a, b *sstable.SSTable, from boundary, to *boundary, capTo *deletiontime.Layout) error {
	c := newComparer(a, from, capTo)
	db := b.Decoder(from.b)
	var hb rows.PartitionHeader
	for {
		if to != nil && c.at.n == to.n {
			pa, pb := c.dec.Source().Pos(), db.Source().Pos()
			if pa != to.a || pb != to.b {
				return fmt.Errorf("partition %d starts at byte %d of the source and %d of the output, expected %d and %d", c.at.n, pa, pb, to.a, to.b)
			}
			return nil
		}
		err := db.ReadPartitionHeader(&hb)
		if errors.Is(err, io.EOF) {
			if err := c.sourceEnds(); err != nil {
				return err
			}
			if to != nil {
				return fmt.Errorf("both sstables end after %d partitions, before partition %d", c.at.n, to.n)
			}
			return nil
		}
		if err != nil {
			return err
		}
		for c.Partition(&hb); c.err == nil; {
			u, err := db.Next(false)
			if err != nil {
				return err
			}
			if u == nil {
				c.End(db.Pos())
				break
			}
			c.Unfiltered(u)
		}
		if c.err != nil {
			return c.err
		}
	}
}

// DescribeDiff names the fields of two unfiltereds that differ (positions
// and sizes, which a conversion changes, left out), for the error message
// of a failed verification (a is the source's, b the output's).
func DescribeDiff(a, b *rows.Unfiltered) string {
	var out strings.Builder
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		switch name {
		case "Offset", "Size", "PrevSize":
			continue
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			fmt.Fprintf(&out, "  %s: source %+v, output %+v\n", name, x, y)
		}
	}
	return out.String()
}

// SameUnfiltered reports whether two unfiltereds hold the same content:
// kind, flags, liveness, deletions, clustering or bound and every cell
// (positions and sizes, which a rewrite changes, are not content). The
// rewrites of an sstable (convert, split, filter) verify their output
// with it. It compares by hand: it runs once per row of every rewritten
// sstable, where reflection would dominate the cost.
func SameUnfiltered(a, b *rows.Unfiltered) bool {
	// The deletion flags are compared as content by sameRowDeletion.
	const delFlags = rows.FlagHasDeletion | rows.FlagExtension
	const delExt = rows.ExtFlagShadowableDel | rows.ExtFlagScyllaShadowable
	if a.Kind != b.Kind || a.Flags&^delFlags != b.Flags&^delFlags || a.ExtFlags&^delExt != b.ExtFlags&^delExt || a.Liveness != b.Liveness ||
		!sameRowDeletion(a, b) || a.EndDeletion != b.EndDeletion ||
		a.StartDeletion != b.StartDeletion || a.ColumnsPresent != b.ColumnsPresent ||
		a.Bound.Kind != b.Bound.Kind || !sameValues(a.Clustering, b.Clustering) || !sameValues(a.Bound.Values, b.Bound.Values) ||
		len(a.Cells) != len(b.Cells) || len(a.ComplexDeletions) != len(b.ComplexDeletions) {
		return false
	}
	for i := range a.Cells {
		ca, cb := &a.Cells[i], &b.Cells[i]
		if ca.Column != cb.Column || ca.Flags != cb.Flags || ca.Timestamp != cb.Timestamp || ca.LocalDeletionTime != cb.LocalDeletionTime ||
			ca.TTL != cb.TTL || !sameBytes(ca.Path, cb.Path) || !sameBytes(ca.Value, cb.Value) {
			return false
		}
	}
	for i := range a.ComplexDeletions {
		if a.ComplexDeletions[i] != b.ComplexDeletions[i] {
			return false
		}
	}
	return true
}

// sameRowDeletion compares row deletions. ScyllaDB's own shadowable
// deletion (extended flag 0x80) is written as Cassandra's shadowable one
// (0x02) by a conversion, so the two spellings are the same content.
func sameRowDeletion(a, b *rows.Unfiltered) bool {
	norm := func(u *rows.Unfiltered) (deletiontime.DeletionTime, bool) {
		if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 && !u.HasDeletion() {
			return u.ScyllaShadowable, true
		}
		return u.Deletion, u.Shadowable
	}
	da, sa := norm(a)
	db, sb := norm(b)
	return da == db && sa == sb
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameValues(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameBytes(a[i], b[i]) {
			return false
		}
	}
	return true
}
