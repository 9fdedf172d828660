package reader

import (
	"sync"
	"testing"
)

// countCRCs sets crcHook for the test and returns the CRC32s taken per
// chunk of d so far.
func countCRCs(t *testing.T, d *Data) func() map[int64]int {
	var mu sync.Mutex
	n := map[int64]int{}
	crcHook = func(of *Data, idx int64) {
		if of == d {
			mu.Lock()
			n[idx]++
			mu.Unlock()
		}
	}
	t.Cleanup(func() { crcHook = nil })
	return func() map[int64]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[int64]int{}
		for k, v := range n {
			out[k] = v
		}
		return out
	}
}

// TestEachChunkCRCOnce: a chunk's CRC32 is taken once however many
// cursors read it (the chunk two segments of a walk on every core share,
// read by both workers) and not again after VerifyChunks; a chunk whose
// CRC does not match is refused on every read.
func TestEachChunkCRCOnce(t *testing.T) {
	const chunkLen = 1024
	plain := syntheticRows(40 * chunkLen)
	tab := buildCompressed(t, plain, &lz4Compressor{}, chunkLen, 1<<30)
	chunks := int64(len(tab.info.ChunkOffsets))
	open := func(b []byte) *Data {
		t.Helper()
		d, err := newData(&memFile{b: b, path: "nb-1-big-Data.db"}, DataOptions{CompressionInfoPath: "ci", HasMaxCompressedLength: true, Verify: true}, tab.ci)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	once := func(t *testing.T, got map[int64]int) {
		t.Helper()
		if int64(len(got)) != chunks {
			t.Errorf("CRC32 taken for %d chunks of %d", len(got), chunks)
		}
		for idx, n := range got {
			if n != 1 {
				t.Errorf("chunk %d: CRC32 taken %d times", idx, n)
			}
		}
	}
	// Segments cut in the middle of chunks, as partition starts cut them:
	// each boundary chunk is read by the segment before and after it.
	t.Run("segments", func(t *testing.T) {
		d := open(tab.data)
		got := countCRCs(t, d)
		cuts := []int64{0, 5*chunkLen + 300, 17*chunkLen + 1, 30*chunkLen + 1000, int64(len(plain))}
		for i := 0; i+1 < len(cuts); i++ {
			// A cursor per segment, as each worker has its own.
			if _, err := d.Cursor(cuts[i]).Next(int(cuts[i+1] - cuts[i])); err != nil {
				t.Fatal(err)
			}
		}
		once(t, got())
	})
	t.Run("after VerifyChunks", func(t *testing.T) {
		d := open(tab.data)
		got := countCRCs(t, d)
		if errs := VerifyChunks(d); len(errs) != 0 {
			t.Fatal(errs)
		}
		if b := mustReadAll(t, d, d.Length()); string(b) != string(plain) {
			t.Fatal("read after VerifyChunks differs")
		}
		once(t, got())
	})
	t.Run("bad chunk", func(t *testing.T) {
		b := append([]byte(nil), tab.data...)
		b[tab.info.ChunkOffsets[7]+3] ^= 0x40
		d := open(b)
		if errs := VerifyChunks(d); len(errs) != 1 {
			t.Fatalf("VerifyChunks: %v, want one error", errs)
		}
		for range 2 {
			if _, err := d.Cursor(7*chunkLen + 10).Next(1); err == nil {
				t.Fatal("the damaged chunk read without an error")
			}
		}
		if _, err := d.Cursor(8 * chunkLen).Next(chunkLen); err != nil {
			t.Fatal(err)
		}
	})
}
