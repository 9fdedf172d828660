package reader

import (
	"hash/crc32"
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

// TestCRC32Combine: the CRC32 of a||b from the parts' CRC32s is hash/crc32's
// of the whole, for lengths from none to several chunks.
func TestCRC32Combine(t *testing.T) {
	b := syntheticRows(70000)
	for _, cut := range [][2]int{{0, 0}, {0, 5}, {5, 5}, {1, 2}, {3, 70000}, {16384, 54000}, {69999, 70000}, {12345, 12346}} {
		x, y := b[:cut[0]], b[cut[0]:cut[1]]
		if got, want := crc32Combine(crc32.ChecksumIEEE(x), crc32.ChecksumIEEE(y), int64(len(y))), crc32.ChecksumIEEE(b[:cut[1]]); got != want {
			t.Errorf("cut %v: combined %#08x, whole %#08x", cut, got, want)
		}
	}
	// x^(8n) for a length past what a table of 32 powers reaches, against
	// the product of its halves.
	n := int64(3) << 40
	if got, want := xPow8n(2*n), gfMul(xPow8n(n), xPow8n(n)); got != want {
		t.Errorf("x^(8·2n) %#08x, (x^(8n))² %#08x", got, want)
	}
}

// TestVerifyChunksDigest: the digest VerifyChunksDigest puts together from
// the chunks' CRC32s is the CRC32 of the file's bytes, whether the chunks
// were checked already, partly, or not at all, and with a damaged chunk;
// a file that is not mapped has none.
func TestVerifyChunksDigest(t *testing.T) {
	const chunkLen = 1024
	plain := syntheticRows(600 * chunkLen) // enough chunks for a range per core
	tab := buildCompressed(t, plain, &lz4Compressor{}, chunkLen, 1<<30)
	bad := append([]byte(nil), tab.data...)
	bad[tab.info.ChunkOffsets[300]+9] ^= 0x01
	for _, tc := range []struct {
		name   string
		b      []byte
		read   int64 // uncompressed bytes read before
		errs   int
		mapped bool
	}{
		{"nothing read", tab.data, 0, 0, true},
		{"all read", tab.data, int64(len(plain)), 0, true},
		{"part read", tab.data, 250*chunkLen + 7, 0, true},
		{"damaged", bad, 100 * chunkLen, 1, true},
		{"buffered", tab.data, 250 * chunkLen, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f File = &memFile{b: tc.b, path: "nb-1-big-Data.db"}
			if !tc.mapped {
				f = readerOnlyFile{f.(*memFile)}
			}
			d, err := newData(f, DataOptions{CompressionInfoPath: "ci", HasMaxCompressedLength: true, Verify: true}, tab.ci)
			if err != nil {
				t.Fatal(err)
			}
			if tc.read > 0 {
				if _, err := d.Cursor(0).Next(int(tc.read)); err != nil {
					t.Fatal(err)
				}
			}
			errs, digest, ok := VerifyChunksDigest(d)
			if len(errs) != tc.errs {
				t.Errorf("%d errors (%v), want %d", len(errs), errs, tc.errs)
			}
			if ok != tc.mapped {
				t.Fatalf("digest known: %v, want %v", ok, tc.mapped)
			}
			if want := crc32.ChecksumIEEE(tc.b); ok && digest != want {
				t.Errorf("digest %#08x, the file's CRC32 %#08x", digest, want)
			}
		})
	}
}
