package reader

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	mmap "github.com/edsrzf/mmap-go"
)

// Access says how a component file is read. Cassandra offers the same two
// choices (disk_access_mode): mapping the file into memory, or reading it
// through buffers.
type Access int

const (
	// Mmap maps the whole file read-only; reads are copies out of the
	// mapping, or no copy at all through Bytes. The OS pages the file in
	// and out, so scanning a file larger than RAM works.
	Mmap Access = iota
	// Buffered reads with os.File.ReadAt through a small buffer. Memory use
	// is bounded by the buffer, whatever the file size.
	Buffered
)

// AccessModes are the access modes, in the order ParseAccess names them.
func AccessModes() []Access { return []Access{Mmap, Buffered} }

// ParseAccess reads "mmap" or "buffered" (case-insensitive).
func ParseAccess(s string) (Access, error) {
	for _, a := range AccessModes() {
		if strings.EqualFold(strings.TrimSpace(s), a.String()) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("unknown access mode %q: want mmap or buffered", s)
}

// String returns "mmap" or "buffered".
func (a Access) String() string {
	switch a {
	case Mmap:
		return "mmap"
	case Buffered:
		return "buffered"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// File is one component file opened read-only. ReadAt is safe for
// concurrent use. Files opened with Mmap also implement Mapped.
type File interface {
	io.ReaderAt
	// Size is the file's length when it was opened; sstable components are
	// immutable once written.
	Size() int64
	Path() string
	Close() error
}

// Mapped is implemented by files opened with Mmap: Bytes is the whole file,
// valid until Close. Callers must not modify it (the mapping is read-only
// and writing faults).
type Mapped interface {
	Bytes() []byte
}

// ErrClosed is returned by reads after Close.
var ErrClosed = errors.New("file already closed")

// Open opens path read-only with the given access mode.
func Open(path string, a Access) (File, error) {
	switch a {
	case Mmap, Buffered:
	default:
		return nil, fmt.Errorf("open %s: unknown access mode %d", path, int(a))
	}
	// Stat before opening: opening a FIFO for reading blocks until a writer
	// appears, so it must be refused without being opened.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: not a regular file", path)
	}
	size := st.Size()
	if a == Buffered {
		return &bufferedFile{f: f, path: path, size: size}, nil
	}
	defer f.Close() // the mapping outlives the descriptor
	if size == 0 {
		// mmap(2) rejects a zero length; an empty file maps to no bytes.
		return &mappedFile{path: path}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("open %s: %d bytes do not fit in the address space", path, size)
	}
	m, err := mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return &mappedFile{path: path, m: m, data: []byte(m)}, nil
}

type mappedFile struct {
	path   string
	m      mmap.MMap // nil for an empty file
	data   []byte
	mu     sync.RWMutex // guards closed against concurrent ReadAt
	closed bool
}

func (f *mappedFile) Size() int64   { return int64(len(f.data)) }
func (f *mappedFile) Path() string  { return f.path }
func (f *mappedFile) Bytes() []byte { return f.data }

func (f *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return 0, ErrClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", f.path, off)
	}
	if off >= int64(len(f.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *mappedFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.data = nil
	if f.m == nil {
		return nil
	}
	err := f.m.Unmap()
	f.m = nil
	return err
}

// bufferSize is the read-ahead of a buffered file: reads smaller than this
// are served from one buffer refilled with a single ReadAt, so callers
// parsing small fields do not pay a system call per field. Larger reads go
// straight to the file.
const bufferSize = 64 << 10

// directReadSize is the read from which ReadAt bypasses the buffer.
const directReadSize = 4 << 10

type bufferedFile struct {
	f    *os.File
	path string
	size int64

	mu     sync.Mutex
	buf    []byte // nil until the first small read
	bufOff int64  // file offset of buf[0]
	closed bool
}

func (f *bufferedFile) Size() int64  { return f.size }
func (f *bufferedFile) Path() string { return f.path }

func (f *bufferedFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", f.path, off)
	}
	if len(p) >= directReadSize {
		// Callers reading whole chunks or index windows manage their own
		// buffers: going through ours would read (and copy) 64 KiB for a
		// 4 KiB lookup. os.File is safe for concurrent ReadAt (and
		// reports its own "closed" error, translated to ours).
		n, err := f.f.ReadAt(p, off)
		if errors.Is(err, os.ErrClosed) {
			err = ErrClosed
		}
		return n, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, ErrClosed
	}
	if off >= f.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	end := off + int64(len(p))
	if off < f.bufOff || end > f.bufOff+int64(len(f.buf)) {
		if err := f.fill(off); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.buf[off-f.bufOff:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill loads the buffer with the bytes at off; near the end of the file it
// holds fewer than bufferSize bytes.
func (f *bufferedFile) fill(off int64) error {
	if f.buf == nil {
		f.buf = make([]byte, bufferSize)
	}
	want := f.size - off
	if want > bufferSize {
		want = bufferSize
	}
	f.buf = f.buf[:want]
	n, err := f.f.ReadAt(f.buf, off)
	f.buf = f.buf[:n]
	f.bufOff = off
	if n < int(want) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // the file shrank after Open
		}
		return fmt.Errorf("read %s at %d: %w", f.path, off, err)
	}
	return nil
}

func (f *bufferedFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.buf = nil
	return f.f.Close()
}
