package benchbase

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	mmap "github.com/edsrzf/mmap-go"
)

// Floors is the floor of several Data.db taken as one (a node's, see
// Node), or of one: every chunk of every file, on as many cores as a
// pass is given. The chunks are split across the cores in batches of
// consecutive chunks (about batchBytes of uncompressed data each), taken
// in file order by whichever core is free, so that a big file and many
// small ones keep every core busy to the end alike. Each core has its own
// buffers; nothing else is shared but the batch counter.
type Floors []*Floor

// batchBytes is about how much uncompressed data a core takes at once:
// what sstable.Segmented gives a worker (a segment of about 1 MiB).
const batchBytes = 1 << 20

// Length is the uncompressed Data.db bytes of every file.
func (fs Floors) Length() int64 {
	var n int64
	for _, f := range fs {
		n += f.Length
	}
	return n
}

// Cores is the number of cores a pass given n uses: n, or GOMAXPROCS
// when n <= 0.
func Cores(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// Read is the read floor of every file on cores cores (0: GOMAXPROCS),
// timed.
func (fs Floors) Read(b testing.TB, cores int) Times {
	return Measure(func() { fatal(b, fs.Pass(cores, false)) })
}

// Rewrite is the rewrite floor of every file on cores cores (0:
// GOMAXPROCS), timed.
func (fs Floors) Rewrite(b testing.TB, cores int) Times {
	return Measure(func() { fatal(b, fs.Pass(cores, true)) })
}

// batch is chunks [from, to) of file.
type batch struct{ file, from, to int }

// Pass is one pass of the floor over every file, untimed, on cores cores
// (0: GOMAXPROCS): map every Data.db, take every chunk through the floor
// (Floor.Pass), unmap. On one core it runs on the calling goroutine, as
// Floor.Pass does.
func (fs Floors) Pass(cores int, rewrite bool) error {
	cores = Cores(cores)
	maps := make([]mmap.MMap, len(fs))
	defer func() {
		for _, m := range maps {
			if m != nil {
				m.Unmap()
			}
		}
	}()
	for i, f := range fs {
		m, file, err := f.mapFile()
		if err != nil {
			return err
		}
		file.Close() // the mapping stays valid
		maps[i] = m
	}
	var batches []batch
	for i, f := range fs {
		per := max(1, batchBytes/max(f.chunkLength, 1))
		for from := 0; from < len(f.chunks); from += per {
			batches = append(batches, batch{i, from, min(from+per, len(f.chunks))})
		}
	}
	var (
		next    atomic.Int64
		sum     atomic.Uint32
		errOnce sync.Once
		first   error
		failed  atomic.Bool
		wg      sync.WaitGroup
	)
	work := func() {
		bufs := make([]*Buffers, len(fs))
		var s uint32
		for !failed.Load() {
			k := int(next.Add(1) - 1)
			if k >= len(batches) {
				break
			}
			bt := batches[k]
			f := fs[bt.file]
			if bufs[bt.file] == nil {
				// Buffers are per chunk length; files of one length share them.
				for j, g := range fs[:bt.file] {
					if bufs[j] != nil && g.chunkLength == f.chunkLength {
						bufs[bt.file] = bufs[j]
						break
					}
				}
				if bufs[bt.file] == nil {
					bufs[bt.file] = f.NewBuffers()
				}
			}
			x, err := f.span(maps[bt.file], bt.from, bt.to, bufs[bt.file], rewrite)
			s ^= x
			if err != nil {
				errOnce.Do(func() { first = err })
				failed.Store(true)
			}
		}
		for {
			old := sum.Load()
			if sum.CompareAndSwap(old, old^s) {
				break
			}
		}
	}
	if cores == 1 {
		work()
	} else {
		for range cores {
			wg.Add(1)
			go func() { defer wg.Done(); work() }()
		}
		wg.Wait()
	}
	Sink ^= sum.Load()
	return first
}
