package trie

import "io"

// Output is a file being written, positioned from its start so that nodes
// can be packed into PageSize pages (Cassandra's SequentialWriter as a
// DataOutputPlus). Tries and whatever their owner writes between them go
// through the same Output. Writes are buffered; call Flush at the end.
type Output struct {
	w   io.Writer
	buf []byte
	pos int64
	err error
}

const outputFlushSize = 64 << 10

// NewOutput writes to w, which starts at file position pos.
func NewOutput(w io.Writer, pos int64) *Output {
	return &Output{w: w, pos: pos, buf: make([]byte, 0, outputFlushSize+PageSize)}
}

// Pos is the file position of the next byte.
func (o *Output) Pos() int64 { return o.pos }

// Write appends p. Errors stick and are also returned by Flush.
func (o *Output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	o.buf = append(o.buf, p...)
	o.pos += int64(len(p))
	if len(o.buf) >= outputFlushSize {
		o.flushBuf()
	}
	return len(p), o.err
}

// BytesLeftInPage is the room before the next page boundary; at a
// boundary it is a whole page (PageAware.bytesLeftInPage).
func (o *Output) BytesLeftInPage() int { return PageSize - int(o.pos&(PageSize-1)) }

// PadToPage writes zeros up to the next page boundary, if not at one.
func (o *Output) PadToPage() error {
	if n := o.pos & (PageSize - 1); n != 0 {
		var zeros [PageSize]byte
		_, err := o.Write(zeros[:PageSize-n])
		return err
	}
	return o.err
}

func (o *Output) flushBuf() {
	if o.err == nil && len(o.buf) > 0 {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
}

// Flush writes out what is buffered and returns the first error seen.
func (o *Output) Flush() error {
	o.flushBuf()
	return o.err
}
