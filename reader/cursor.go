package reader

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
)

// Cursor reads Data.db's uncompressed bytes sequentially: it is what the
// partition decoder runs on. It keeps the current chunk (and one more, for
// Peek across a boundary) decompressed, so a sequential pass decompresses
// each chunk once. A Cursor is not safe for concurrent use; open one per
// goroutine.
//
// Slices returned by Next and Peek point into the mapping or the current
// chunk when the bytes lie in one chunk, else into a scratch buffer the
// cursor reuses; they are valid until the next call on the cursor (and,
// for mapped files, until Data.Close).
type Cursor struct {
	d *Data

	cur    []byte // uncompressed bytes of chunk curIdx, nil when not loaded
	off    int    // read position inside cur
	base   int64  // uncompressed position of cur[0] (or of the cursor when cur is nil)
	curIdx int64  // chunk held in cur, -1 for none

	slots   [2]chunkSlot
	lastUse int       // slot most recently returned
	ra      readAhead // stored chunks read ahead from the file (Buffered)
	scratch []byte    // bytes assembled across chunks
}

type chunkSlot struct {
	idx  int64  // chunk index, -1 when empty
	data []byte // its uncompressed bytes
	buf  []byte // owned buffer data may live in
}

// Cursor returns a cursor positioned at uncompressed offset off. An offset
// outside the data makes the first read fail.
func (d *Data) Cursor(off int64) *Cursor {
	c := &Cursor{d: d, base: off, curIdx: -1}
	c.slots[0].idx, c.slots[1].idx = -1, -1
	return c
}

// Pos is the uncompressed position of the next byte.
func (c *Cursor) Pos() int64 { return c.base + int64(c.off) }

// Remaining is the number of bytes from Pos to the end of the data.
func (c *Cursor) Remaining() int64 { return c.d.length - c.Pos() }

// Next consumes exactly n bytes and returns them. Asking for more than
// remain is a *corrupt.Error wrapping io.ErrUnexpectedEOF; the position is
// then unchanged.
func (c *Cursor) Next(n int) ([]byte, error) {
	if uint(n) <= uint(len(c.cur)-c.off) {
		b := c.cur[c.off : c.off+n]
		c.off += n
		return b, nil
	}
	return c.nextSlow(n)
}

// Peek returns the next n bytes without consuming them. Near the end of the
// data it returns the bytes that remain (possibly none) together with
// io.EOF itself (not wrapped), so err == io.EOF means "fewer than n bytes
// are left" and callers can compare directly; any other error is a
// *corrupt.Error.
func (c *Cursor) Peek(n int) ([]byte, error) {
	if uint(n) <= uint(len(c.cur)-c.off) {
		return c.cur[c.off : c.off+n], nil
	}
	return c.peekSlow(n)
}

// Skip moves forward by n bytes (backward when negative) without reading
// them; leaving the range 0..Length is a *corrupt.Error.
func (c *Cursor) Skip(n int64) error {
	if n >= 0 && n <= int64(len(c.cur)-c.off) {
		c.off += int(n)
		return nil
	}
	pos := c.Pos()
	target := pos + n
	if (n > 0 && target < pos) || target > c.d.length {
		return c.eof(pos, fmt.Sprintf("%d bytes to skip", n))
	}
	return c.SeekTo(target)
}

// SeekTo moves to uncompressed offset off (0 ≤ off ≤ Length). (It is not
// called Seek so that name can keep io.Seeker's meaning.)
func (c *Cursor) SeekTo(off int64) error {
	if off < 0 || off > c.d.length {
		return corrupt.New(c.d.path, dataComponent, off, fmt.Sprintf("a position within the %d uncompressed bytes", c.d.length), io.ErrUnexpectedEOF)
	}
	if c.cur != nil && off >= c.base && off <= c.base+int64(len(c.cur)) {
		c.off = int(off - c.base)
		return nil
	}
	c.cur, c.curIdx, c.base, c.off = nil, -1, off, 0
	return nil
}

// Seek implements io.Seeker over the uncompressed bytes.
func (c *Cursor) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.Pos()
	case io.SeekEnd:
		offset += c.d.length
	default:
		return c.Pos(), fmt.Errorf("%s: seek: bad whence %d", c.d.path, whence)
	}
	if err := c.SeekTo(offset); err != nil {
		return c.Pos(), err
	}
	return offset, nil
}

func (c *Cursor) eof(pos int64, expected string) error {
	if c.d.info != nil {
		// Say which kind of offset this is: chunk errors carry file offsets.
		expected += " at this uncompressed position"
	}
	return corrupt.New(c.d.path, dataComponent, pos, expected,
		fmt.Errorf("%w: %d uncompressed bytes remain", io.ErrUnexpectedEOF, max(c.d.length-pos, 0)))
}

// checkPos rejects a position outside the data (from Cursor(off)).
func (c *Cursor) checkPos(pos int64) error {
	if pos < 0 || pos > c.d.length {
		return corrupt.New(c.d.path, dataComponent, pos, fmt.Sprintf("a position within the %d uncompressed bytes", c.d.length), io.ErrUnexpectedEOF)
	}
	return nil
}

// ensure loads the chunk holding Pos when cur is exhausted or unset. At the
// end of the data it leaves cur empty.
func (c *Cursor) ensure() error {
	if c.off < len(c.cur) {
		return nil
	}
	pos := c.Pos()
	if err := c.checkPos(pos); err != nil {
		return err
	}
	if pos == c.d.length {
		return nil
	}
	idx := pos / c.d.chunkLen
	data, err := c.chunk(idx)
	if err != nil {
		return err
	}
	c.cur, c.curIdx, c.base, c.off = data, idx, idx*c.d.chunkLen, int(pos-idx*c.d.chunkLen)
	return nil
}

// chunk returns chunk idx's bytes, from a slot when it is still there,
// else read into the slot that does not hold the current chunk.
func (c *Cursor) chunk(idx int64) ([]byte, error) {
	for i := range c.slots {
		if c.slots[i].idx == idx {
			c.lastUse = i
			return c.slots[i].data, nil
		}
	}
	victim := 1 - c.lastUse
	switch {
	case c.slots[0].idx == c.curIdx && c.curIdx >= 0:
		victim = 1
	case c.slots[1].idx == c.curIdx && c.curIdx >= 0:
		victim = 0
	}
	s := &c.slots[victim]
	s.idx, s.data = -1, nil
	data, buf, err := c.d.readChunk(idx, s.buf, &c.ra)
	s.buf = buf
	if err != nil {
		return nil, err
	}
	s.idx, s.data = idx, data
	c.lastUse = victim
	return data, nil
}

func (c *Cursor) nextSlow(n int) ([]byte, error) {
	pos := c.Pos()
	if err := c.checkPos(pos); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, corrupt.New(c.d.path, dataComponent, pos, "a non-negative length", fmt.Errorf("asked for %d bytes", n))
	}
	if int64(n) > c.d.length-pos {
		return nil, c.eof(pos, fmt.Sprintf("%d more bytes", n))
	}
	if err := c.ensure(); err != nil {
		return nil, err
	}
	if n <= len(c.cur)-c.off {
		b := c.cur[c.off : c.off+n]
		c.off += n
		return b, nil
	}
	// The bytes span chunks: copy them together. Room is reserved for two
	// chunks at most; append grows it as chunks actually decode, so a
	// corrupt length cannot allocate what Data.db only claims to hold.
	c.scratch = grow(c.scratch[:0], c.spanReserve(n))
	for len(c.scratch) < n {
		if err := c.ensure(); err != nil {
			c.SeekTo(pos)
			return nil, err
		}
		k := min(n-len(c.scratch), len(c.cur)-c.off)
		c.scratch = append(c.scratch, c.cur[c.off:c.off+k]...)
		c.off += k
	}
	return c.scratch, nil
}

func (c *Cursor) peekSlow(n int) ([]byte, error) {
	pos := c.Pos()
	if err := c.checkPos(pos); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, corrupt.New(c.d.path, dataComponent, pos, "a non-negative length", fmt.Errorf("asked for %d bytes", n))
	}
	m := n
	var short error
	if rem := c.d.length - pos; int64(m) > rem {
		m, short = int(rem), io.EOF
	}
	if err := c.ensure(); err != nil {
		return nil, err
	}
	if m <= len(c.cur)-c.off {
		return c.cur[c.off : c.off+m], short
	}
	c.scratch = append(grow(c.scratch[:0], c.spanReserve(m)), c.cur[c.off:]...)
	for idx := c.curIdx + 1; len(c.scratch) < m; idx++ {
		data, err := c.chunk(idx)
		if err != nil {
			return nil, err
		}
		k := min(m-len(c.scratch), len(data))
		c.scratch = append(c.scratch, data[:k]...)
	}
	return c.scratch, short
}

// spanReserve is the scratch room reserved up front for n bytes spanning
// chunks: n, but no more than two chunks.
func (c *Cursor) spanReserve(n int) int {
	return int(min(int64(n), 2*c.d.chunkLen))
}
