package vfs

import "io"

// WritebackEvery is how many bytes a Writeback lets a file take before it
// hands them to the disk's writeback: large enough that the system calls
// cost nothing next to the writes, small enough that the fsync at the
// file's close finds little left to write.
const WritebackEvery = 8 << 20

// Writeback starts the disk's writeback of a file as it is written, every
// WritebackEvery bytes (StartWriteback), for the writers that fsync a
// large file at its end: the staged components of internal/writer and
// export's Parquet files.
type Writeback struct {
	f       File
	started int64 // the bytes before it were handed to StartWriteback
}

// NewWriteback follows f, which holds nothing yet.
func NewWriteback(f File) Writeback { return Writeback{f: f} }

// Written says that the file's first n bytes are written to it (not
// still in a buffer of the caller's); once they are WritebackEvery or
// more past what was handed on, they are handed on.
func (w *Writeback) Written(n int64) {
	if n-w.started >= WritebackEvery {
		StartWriteback(w.f, w.started, n-w.started)
		w.started = n
	}
}

// Started is how many of the file's first bytes were handed on.
func (w *Writeback) Started() int64 { return w.started }

// CountingWriter passes writes on to W and counts the bytes written in N:
// the size of a component as it is written (convert, internal/writer),
// the position in a Parquet file (export).
type CountingWriter struct {
	W io.Writer
	N int64
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
