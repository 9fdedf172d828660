package stats

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/format/vint"
	"github.com/sstabletool/sstabletool/internal/words"
)

// ComponentName is the component every error of this package names.
const ComponentName = "Statistics.db"

// cursor reads big-endian fields from one part of Statistics.db. The first
// failure sticks: later reads return zero values, so decoders can read a
// run of fields and check the error once. Offsets in errors are absolute
// within the file.
type cursor struct {
	b    []byte
	pos  int
	base int64  // file offset of b[0]
	part string // which component is being read, for messages
	// within names the structure being read (a histogram, say), so that
	// field names passed in loops stay constants and messages are only
	// composed on failure.
	within string
	err    error
}

func (c *cursor) fail(at int, expected string, cause error) {
	if c.err == nil {
		if c.within != "" {
			expected = c.within + " " + expected
		}
		c.err = &corrupt.Error{Component: ComponentName, Offset: c.base + int64(at),
			Expected: c.part + " " + expected, Err: cause}
	}
}

// enter sets the structure name for messages and returns the restorer.
func (c *cursor) enter(within string) (restore func()) {
	old := c.within
	c.within = within
	return func() { c.within = old }
}

func (c *cursor) remaining() int { return len(c.b) - c.pos }

// need reports whether n more bytes are available, failing otherwise.
func (c *cursor) need(n int, what string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || n > c.remaining() {
		c.fail(c.pos, fmt.Sprintf("%s (%s), but only %s left in the component", what, words.Plural(n, "byte"), words.Plural(c.remaining(), "byte")),
			io.ErrUnexpectedEOF)
		return false
	}
	return true
}

func (c *cursor) u8(what string) byte {
	if !c.need(1, what) {
		return 0
	}
	v := c.b[c.pos]
	c.pos++
	return v
}

// boolean reads a Java boolean. Java treats any non-zero byte as true but
// only ever writes 0 or 1; anything else is refused so that re-encoding is
// exact.
func (c *cursor) boolean(what string) bool {
	at := c.pos
	v := c.u8(what)
	if v > 1 {
		c.fail(at, fmt.Sprintf("%s as a boolean byte 0 or 1, found 0x%02x", what, v), nil)
	}
	return v == 1
}

func (c *cursor) i16(what string) uint16 {
	if !c.need(2, what) {
		return 0
	}
	v := binary.BigEndian.Uint16(c.b[c.pos:])
	c.pos += 2
	return v
}

func (c *cursor) i32(what string) int32 {
	if !c.need(4, what) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(c.b[c.pos:]))
	c.pos += 4
	return v
}

func (c *cursor) i64(what string) int64 {
	if !c.need(8, what) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(c.b[c.pos:]))
	c.pos += 8
	return v
}

// f64 reads a double keeping its exact bits (NaN payloads included).
func (c *cursor) f64(what string) float64 { return math.Float64frombits(uint64(c.i64(what))) }

// bytes returns n bytes, aliasing the input.
func (c *cursor) bytes(n int, what string) []byte {
	if !c.need(n, what) {
		return nil
	}
	v := c.b[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return v
}

// uvint reads an unsigned vint. Cassandra always writes the shortest form;
// a longer one is refused so that re-encoding is exact.
func (c *cursor) uvint(what string) uint64 {
	if c.err != nil {
		return 0
	}
	at := c.pos
	v, n, err := vint.Unsigned(c.b[c.pos:])
	if err != nil {
		c.fail(at, what+" as a vint", err)
		return 0
	}
	if n != vint.UnsignedSize(v) {
		c.fail(at, fmt.Sprintf("%s as a shortest-form vint, found a %d-byte encoding of %d", what, n, v), nil)
		return 0
	}
	c.pos += n
	return v
}

// count checks a count read at offset at against the bytes left, given the
// smallest encoding of one element, before anything is allocated for it.
func (c *cursor) count(at int, n int64, minEach int, what string) int {
	if c.err != nil {
		return 0
	}
	if n < 0 || n > int64(c.remaining()/minEach) {
		c.fail(at, fmt.Sprintf("%s count that fits the %d bytes left (at least %d bytes each), found %d", what, c.remaining(), minEach, n), nil)
		return 0
	}
	return int(n)
}

// vintBytes reads a vint length followed by that many bytes.
func (c *cursor) vintBytes(what string) []byte {
	at := c.pos
	n := c.uvint(what + " length")
	if c.err != nil {
		return nil
	}
	if n > uint64(c.remaining()) {
		c.fail(at, fmt.Sprintf("%s length within the %d bytes left, found %d", what, c.remaining(), n), io.ErrUnexpectedEOF)
		return nil
	}
	return c.bytes(int(n), what)
}

// appendVintBytes writes a vint length and the bytes.
func appendVintBytes(dst, b []byte) []byte {
	return append(vint.AppendUnsigned(dst, uint64(len(b))), b...)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendF64(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
}

// initialCap bounds the capacity reserved for a count read from the file:
// lists grow with the elements actually decoded, not with the claim.
func initialCap(n int) int { return min(n, 16) }
