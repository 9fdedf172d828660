package export

import (
	"sync"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// writeBehind is a Parquet file's write buffer: what the writer gives it
// is copied into chunks, which a goroutine of its own writes to the file
// in order. Closing a row group hands over all its pages at once (20 MB
// and more, one column after the other, while every other column waits
// for the next row group); through this it costs that copy, and the
// write system calls (a tenth of the export's time) overlap the next row
// group's encoding. Written here rather than taken from a library: it is
// bufio.Writer with its flush on a goroutine, bounded.
type writeBehind struct {
	f       vfs.File
	cur     []byte      // the chunk being filled
	full    chan []byte // chunks to write, in order
	free    chan []byte // chunks written
	chunks  int         // chunks made so far, at most maxChunks
	pending sync.WaitGroup
	done    chan struct{} // the goroutine has ended
	closed  bool
	mu      sync.Mutex
	err     error // the first write error
}

const (
	writeChunk = 1 << 20
	// writebackBytes: every this many bytes written, the disk is asked
	// to start writing them (startWriteback).
	writebackBytes = 8 << 20
	// maxChunks bounds the bytes queued for the disk: a row group's pages
	// (rowGroupBytes) and some.
	maxChunks = 40
)

func newWriteBehind(f vfs.File) *writeBehind {
	w := &writeBehind{f: f, full: make(chan []byte, maxChunks), free: make(chan []byte, maxChunks), done: make(chan struct{})}
	go w.write()
	return w
}

func (w *writeBehind) write() {
	defer close(w.done)
	var written, synced int64
	for b := range w.full {
		if w.error() == nil {
			if _, err := w.f.Write(b); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			}
			if written += int64(len(b)); written-synced >= writebackBytes {
				startWriteback(w.f, synced, written-synced)
				synced = written
			}
		}
		w.free <- b[:0]
		w.pending.Done()
	}
}

func (w *writeBehind) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Write copies p into the chunks, queueing each one that fills. It
// returns the first error of an earlier chunk's write.
func (w *writeBehind) Write(p []byte) (int, error) {
	if err := w.error(); err != nil {
		return 0, err
	}
	n := 0
	for len(p) > 0 {
		if w.cur == nil {
			w.cur = w.chunk()
		}
		k := copy(w.cur[len(w.cur):cap(w.cur)], p)
		w.cur, p, n = w.cur[:len(w.cur)+k], p[k:], n+k
		if len(w.cur) == cap(w.cur) {
			w.queue()
		}
	}
	return n, nil
}

// chunk is a chunk to fill: a new one while fewer than maxChunks exist,
// else the next one written.
func (w *writeBehind) chunk() []byte {
	select {
	case b := <-w.free:
		return b
	default:
	}
	if w.chunks < maxChunks {
		w.chunks++
		return make([]byte, 0, writeChunk)
	}
	return <-w.free
}

func (w *writeBehind) queue() {
	w.pending.Add(1)
	w.full <- w.cur
	w.cur = nil
}

// Flush writes what is buffered and waits for every chunk's write,
// returning the first error.
func (w *writeBehind) Flush() error {
	if len(w.cur) > 0 {
		w.queue()
	}
	w.pending.Wait()
	return w.error()
}

// close ends the goroutine, once what is queued is written (or, after an
// error, dropped). What is buffered and not queued is dropped.
func (w *writeBehind) close() {
	if w.closed {
		return
	}
	w.closed = true
	close(w.full)
	<-w.done
}
