package stats

import (
	"encoding/hex"
	"fmt"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// UUID is a 16-byte UUID as Cassandra writes it (most significant long
// first). Pending repair session ids are time UUIDs, host ids random ones.
type UUID [16]byte

func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// CommitLogPosition is a position in the commit log (db/commitlog/CommitLogPosition.java):
// a segment id and a byte position in it.
type CommitLogPosition struct {
	SegmentID int64
	Position  int32
}

// NoCommitLogPosition is CommitLogPosition.NONE, written for sstables that
// did not come from a local flush (streamed ones, for example).
var NoCommitLogPosition = CommitLogPosition{SegmentID: -1, Position: 0}

func (p CommitLogPosition) String() string {
	return fmt.Sprintf("CommitLogPosition(segmentId=%d, position=%d)", p.SegmentID, p.Position)
}

// CommitLogInterval is one range of an IntervalSet<CommitLogPosition>: the
// commit log span whose writes this sstable holds.
type CommitLogInterval struct {
	Start, End CommitLogPosition
}

// TypeName is an AbstractType as stored (its class string, kept exactly)
// and as parsed.
type TypeName struct {
	Class string
	Type  *cqltype.Type
}

func (t TypeName) String() string { return t.Class }

// parseType parses a stored type string; the cursor names the offset on failure.
func (c *cursor) typeName(what string) TypeName {
	at := c.pos
	raw := c.vintBytes(what)
	if c.err != nil {
		return TypeName{}
	}
	s := string(raw)
	t, err := cqltype.Parse(s)
	if err != nil {
		c.fail(at, what+" as an AbstractType class string", err)
		return TypeName{}
	}
	return TypeName{Class: s, Type: t}
}

// typeList reads an unsigned vint count and that many type strings
// (serializers/AbstractTypeSerializer.java).
func (c *cursor) typeList(what string) []TypeName {
	at := c.pos
	n := c.count(at, int64(c.uvint(what+" count")), 1, what)
	if c.err != nil || n == 0 {
		return nil
	}
	out := make([]TypeName, 0, initialCap(n))
	for i := 0; i < n && c.err == nil; i++ {
		out = append(out, c.typeName(fmt.Sprintf("%s %d", what, i)))
	}
	return out
}

func appendTypeList(dst []byte, ts []TypeName) []byte {
	dst = vint.AppendUnsigned(dst, uint64(len(ts)))
	for _, t := range ts {
		dst = appendVintBytes(dst, []byte(t.Class))
	}
	return dst
}

// fixedLengths returns each type's fixed value width (-1 when values carry
// a length), the form package clustering takes.
func fixedLengths(ts []TypeName) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = -1
		if t.Type != nil {
			out[i] = t.Type.FixedLength()
		}
	}
	return out
}

// Slice is a range of clusterings between two bounds (db/Slice.java); the
// stats component uses it for the clusterings an sstable covers.
type Slice struct {
	Start, End clustering.Prefix
}

// AllClusterings is Slice.ALL: from the bottom to the top bound, both
// inclusive and empty.
var AllClusterings = Slice{
	Start: clustering.Prefix{Kind: clustering.InclStartBound},
	End:   clustering.Prefix{Kind: clustering.InclEndBound},
}

func (c *cursor) bound(fixed []int, what string) clustering.Prefix {
	if c.err != nil {
		return clustering.Prefix{}
	}
	at := c.pos
	p, n, err := clustering.DecodeBound(nil, c.b[c.pos:], fixed)
	if err != nil {
		c.fail(at, what+" as a clustering bound", err)
		return clustering.Prefix{}
	}
	if p.Kind.IsBoundary() {
		c.fail(at, fmt.Sprintf("%s as a clustering bound, found a boundary (%s)", what, p.Kind), nil)
		return clustering.Prefix{}
	}
	c.pos += n
	return p
}
