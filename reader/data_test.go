package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// TestDataAccessModesIdentical reads every fixture Data.db in both access
// modes, with read sizes that land on and across chunk boundaries, and
// through ReadAt, and requires the same bytes everywhere.
func TestDataAccessModesIdentical(t *testing.T) {
	steps := map[string]func(int) int{
		"1":      func(int) int { return 1 },
		"7":      func(int) int { return 7 },
		"varied": func(i int) int { return []int{1, 3, 200, 5000, 16384, 40000, 2}[i%7] },
	}
	for _, f := range fixtureTables(t) {
		var ref []byte
		for _, a := range []Access{Mmap, Buffered} {
			d, err := OpenData(f.data, a, f.options())
			if err != nil {
				t.Fatalf("%s %v: %v", f.name, a, err)
			}
			for name, step := range steps {
				got := readAll(t, d, step)
				if int64(len(got)) != d.Length() {
					t.Fatalf("%s %v step %s: %d bytes, Length %d", f.name, a, name, len(got), d.Length())
				}
				if ref == nil {
					ref = got
				} else if !bytes.Equal(got, ref) {
					t.Fatalf("%s %v step %s: bytes differ from the first read", f.name, a, name)
				}
			}
			if got := mustReadAll(t, d, d.Length()); !bytes.Equal(got, ref) {
				t.Fatalf("%s %v: ReadAt differs", f.name, a)
			}
			d.Close()
		}
		if f.ci == "" {
			raw, _ := os.ReadFile(f.data)
			if !bytes.Equal(raw, ref) {
				t.Errorf("%s: uncompressed Data differs from the file", f.name)
			}
		}
	}
}

// TestDataKnownContent checks decompressed bytes against facts about the
// tables that do not come from this package: the partition keys and values
// the fixtures' README lists, and the uncompressed length CompressionInfo
// states (checked in TestLZ4DecompressFixtureChunks).
func TestDataKnownContent(t *testing.T) {
	for _, v := range []string{"nb", "nc", "oa"} {
		dir := fixtures.Table(t, v, "legacy_"+v+"_simple")
		d, err := OpenData(filepath.Join(dir, v+"-1-big-Data.db"), Mmap, DataOptions{
			CompressionInfoPath: filepath.Join(dir, v+"-1-big-CompressionInfo.db"), HasMaxCompressedLength: true, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		all := mustReadAll(t, d, d.Length())
		if n := bytes.Count(all, []byte("foo bar baz")); n != 5 {
			t.Errorf("%s simple: %d values 'foo bar baz', want 5", v, n)
		}
		// The first partition: 2-byte key length 1, then a key '0'..'4'.
		if all[0] != 0 || all[1] != 1 || all[2] < '0' || all[2] > '4' {
			t.Errorf("%s simple: first partition header %x", v, all[:3])
		}
		d.Close()
	}
}

func TestCursorZeroCopyAndScratch(t *testing.T) {
	f := fixtureTables(t)
	var clust fixtureTable
	for _, x := range f {
		if x.name == "legacy_nc_clust" {
			clust = x
		}
	}
	d, err := OpenData(clust.data, Mmap, clust.options())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := d.Cursor(16380)
	a, _ := c.Next(2)
	b, _ := c.Next(2)
	// Within a chunk, consecutive slices are adjacent in the chunk buffer.
	if unsafe.Pointer(&b[0]) != unsafe.Add(unsafe.Pointer(&a[0]), 2) {
		t.Error("Next inside one chunk copied")
	}
	// Across the boundary at 16384 the bytes are assembled.
	c2 := d.Cursor(16382)
	x, err := c2.Next(4)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 4)
	d.ReadAt(want, 16382)
	if !bytes.Equal(x, want) {
		t.Errorf("boundary read %x, want %x", x, want)
	}
	// Uncompressed and mapped: slices point into the mapping itself.
	var unc fixtureTable
	for _, x := range f {
		if x.ci == "" {
			unc = x
			break
		}
	}
	u, err := OpenData(unc.data, Mmap, unc.options())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	s, _ := u.Cursor(3).Next(5)
	m := u.File().(Mapped).Bytes()
	if &s[0] != &m[3] {
		t.Error("mapped uncompressed Next is not zero-copy")
	}
}

func TestCursorPeekSkipSeek(t *testing.T) {
	for _, f := range fixtureTables(t) {
		for _, a := range []Access{Mmap, Buffered} {
			d, err := OpenData(f.data, a, f.options())
			if err != nil {
				t.Fatal(err)
			}
			all := mustReadAll(t, d, d.Length())
			r := rand.New(rand.NewPCG(5, 6))
			c := d.Cursor(0)
			for i := 0; i < 300; i++ {
				pos := r.Int64N(d.Length() + 1)
				if err := c.SeekTo(pos); err != nil {
					t.Fatal(err)
				}
				n := r.IntN(20000)
				p, err := c.Peek(n)
				wantN := int(min(int64(n), d.Length()-pos))
				if !bytes.Equal(p, all[pos:pos+int64(wantN)]) {
					t.Fatalf("%s %v: Peek(%d) at %d wrong bytes", f.name, a, n, pos)
				}
				if (wantN < n) != (err == io.EOF) || (err != nil && err != io.EOF) {
					t.Fatalf("%s %v: Peek(%d) at %d of %d: err %v", f.name, a, n, pos, d.Length(), err)
				}
				if c.Pos() != pos {
					t.Fatalf("Peek moved the cursor")
				}
				k := r.Int64N(200)
				err = c.Skip(k)
				if pos+k > d.Length() {
					if !errors.Is(err, io.ErrUnexpectedEOF) || c.Pos() != pos {
						t.Fatalf("Skip past end: %v, pos %d", err, c.Pos())
					}
					continue
				}
				if err != nil || c.Pos() != pos+k {
					t.Fatalf("Skip(%d): %v, pos %d", k, err, c.Pos())
				}
				if c.Remaining() > 0 {
					b, err := c.Next(1)
					if err != nil || b[0] != all[pos+k] {
						t.Fatalf("Next after Skip: %v", err)
					}
				}
			}
			// Reading past the end fails without moving.
			c.SeekTo(d.Length() - 1)
			_, err = c.Next(2)
			var ce *corrupt.Error
			if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) || ce.Component != "Data.db" || ce.File != f.data || ce.Offset != d.Length()-1 {
				t.Fatalf("Next past end: %v", err)
			}
			if c.Pos() != d.Length()-1 {
				t.Fatal("failed Next moved the cursor")
			}
			if _, err := c.Next(-1); err == nil {
				t.Fatal("Next(-1) succeeded")
			}
			if err := c.SeekTo(d.Length() + 1); err == nil {
				t.Fatal("SeekTo past end succeeded")
			}
			if _, err := d.Cursor(-5).Next(1); err == nil {
				t.Fatal("cursor at -5 read")
			}
			if p, err := d.Cursor(d.Length()).Peek(3); len(p) != 0 || err != io.EOF {
				t.Fatalf("Peek at end: %v, %v", p, err)
			}
			if off, err := c.Seek(-3, io.SeekEnd); err != nil || off != d.Length()-3 {
				t.Fatalf("Seek from end: %d %v", off, err)
			}
			d.Close()
		}
	}
}

// damage flips one byte of Data.db at off.
func damage(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptChunkDetected(t *testing.T) {
	var f fixtureTable
	for _, x := range fixtureTables(t) {
		if x.name == "legacy_oa_clust" {
			f = x
		}
	}
	data, ci := copyFixture(t, f)
	ciBytes, _ := os.ReadFile(ci)
	info, _ := DecodeCompressionInfo(ciBytes, true)
	const bad = 3
	chunkAt := info.ChunkOffsets[bad]
	damage(t, data, chunkAt+50)

	for _, a := range []Access{Mmap, Buffered} {
		d, err := OpenData(data, a, DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		errs := VerifyChunks(d)
		if len(errs) != 1 {
			t.Fatalf("%v: VerifyChunks found %d errors, want 1: %v", a, len(errs), errs)
		}
		checkChunkErr(t, errs[0], data, chunkAt, bad)

		// A sequential scan stops at the damaged chunk with the same error.
		c := d.Cursor(0)
		var scanErr error
		for c.Remaining() > 0 && scanErr == nil {
			_, scanErr = c.Next(int(min(1000, c.Remaining())))
		}
		checkChunkErr(t, scanErr, data, chunkAt, bad)
		if c.Pos() >= int64(bad+1)*16384 {
			t.Errorf("%v: scan went past the bad chunk to %d", a, c.Pos())
		}
		// Random access into it fails too; the chunks around it still read.
		if _, err := d.ReadAt(make([]byte, 10), bad*16384+5); !errors.Is(err, corrupt.ErrChecksum) {
			t.Errorf("%v: ReadAt into bad chunk: %v", a, err)
		}
		if _, err := d.ReadAt(make([]byte, 10), (bad+1)*16384); err != nil {
			t.Errorf("%v: ReadAt after bad chunk: %v", a, err)
		}
		d.Close()
	}
}

func checkChunkErr(t *testing.T, err error, path string, off int64, idx int) {
	t.Helper()
	var ce *corrupt.Error
	if !errors.As(err, &ce) || !errors.Is(err, corrupt.ErrChecksum) {
		t.Fatalf("error %v: want a checksum *corrupt.Error", err)
	}
	if ce.File != path || ce.Component != "Data.db" || ce.Offset != off || !bytes.Contains([]byte(ce.Expected), []byte(fmt.Sprintf("chunk %d ", idx))) {
		t.Fatalf("error %+v: want file %s, Data.db, offset %d, chunk %d", ce, path, off, idx)
	}
}

func TestCompressionInfoBeyondData(t *testing.T) {
	var f fixtureTable
	for _, x := range fixtureTables(t) {
		if x.name == "legacy_nb_clust" {
			f = x
		}
	}
	data, ci := copyFixture(t, f)
	b, _ := os.ReadFile(data)
	os.WriteFile(data, b[:len(b)-500], 0o644) // lose the last chunk's end
	_, err := OpenData(data, Mmap, DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true, Verify: true})
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.File != ci || ce.Component != "CompressionInfo.db" {
		t.Fatalf("truncated Data.db: %v", err)
	}
	os.WriteFile(ci, []byte{0, 1}, 0o644)
	_, err = OpenData(data, Mmap, DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true})
	if !errors.As(err, &ce) || ce.File != ci {
		t.Fatalf("short CompressionInfo.db: %v", err)
	}
}

// TestDataEveryCompressor writes tables with each compressor, including raw
// chunks (stored length ≥ max compressed length) and a zero-padded raw last
// chunk, and reads them back in both modes.
func TestDataEveryCompressor(t *testing.T) {
	plain := syntheticRows(5*4096 + 1234)
	r := rand.New(rand.NewPCG(7, 8))
	// Incompressible, so every chunk is stored raw; the last, 3684 bytes,
	// compresses to more than the 3686-byte threshold and is stored raw
	// padded with zeros to 3686 (except by Noop, whose output is 3684).
	noise := make([]byte, 3*4096+3684)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for _, cc := range allCompressors {
		comp, err := CompressorFor(cc.class, cc.options)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			plain []byte
			max   int
		}{
			{"compressible", plain, 1<<31 - 1},
			{"raw chunks", noise, 3686}, // min_compress_ratio 1.1 → ceil(4096/1.1)
		} {
			tab := buildCompressed(t, tc.plain, comp, 4096, tc.max)
			tab.info.Options = cc.options
			tab.info.OptionKeys = nil
			for k := range cc.options {
				tab.info.OptionKeys = append(tab.info.OptionKeys, k)
			}
			tab.ci = tab.info.Encode(true)
			if tc.max < 1<<31-1 {
				offs := tab.info.ChunkOffsets
				lastStored := int64(len(tab.data)) - offs[len(offs)-1] - 4
				padded := lastStored == int64(tc.max)
				if padded == (cc.class == "NoopCompressor") || offs[1]-offs[0]-4 != 4096 {
					t.Fatalf("%s: test table lacks raw chunks (last stored %d)", cc.class, lastStored)
				}
			}
			dataPath, ciPath := writeTable(t, t.TempDir(), tab)
			for _, a := range []Access{Mmap, Buffered} {
				d, err := OpenData(dataPath, a, DataOptions{CompressionInfoPath: ciPath, HasMaxCompressedLength: true, Verify: true})
				if err != nil {
					t.Fatalf("%s %s %v: %v", cc.class, tc.name, a, err)
				}
				got := readAll(t, d, func(i int) int { return 1 + i*37%9000 })
				if !bytes.Equal(got, tc.plain) {
					t.Fatalf("%s %s %v: bytes differ", cc.class, tc.name, a)
				}
				if errs := VerifyChunks(d); len(errs) != 0 {
					t.Fatalf("%s %s: %v", cc.class, tc.name, errs)
				}
				d.Close()
			}
		}
	}
}

func TestDataReadAtConcurrent(t *testing.T) {
	var f fixtureTable
	for _, x := range fixtureTables(t) {
		if x.name == "legacy_nc_clust_counter" {
			f = x
		}
	}
	d, err := OpenData(f.data, Buffered, f.options())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	all := readAll(t, d, func(int) int { return 4096 })
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			for i := 0; i < 200; i++ {
				off := r.Int64N(d.Length())
				p := make([]byte, r.IntN(40000))
				n, err := d.ReadAt(p, off)
				if !bytes.Equal(p[:n], all[off:off+int64(n)]) || (err != nil && err != io.EOF) || (err == nil && n != len(p)) {
					t.Errorf("ReadAt(%d, %d) = %d, %v", len(p), off, n, err)
					return
				}
			}
		}(uint64(g))
	}
	wg.Wait()
}

// TestScanMemoryBounded scans an 8 MiB compressed table in Buffered mode and
// requires the scan to allocate a small constant, not the file.
func TestScanMemoryBounded(t *testing.T) {
	comp, _ := CompressorFor("LZ4Compressor", nil)
	tab := buildCompressed(t, syntheticRows(8<<20), comp, 16384, 1<<31-1)
	dataPath, ciPath := writeTable(t, t.TempDir(), tab)
	for _, a := range []Access{Buffered, Mmap} {
		d, err := OpenData(dataPath, a, DataOptions{CompressionInfoPath: ciPath, HasMaxCompressedLength: true, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c := d.Cursor(0)
		for c.Remaining() > 0 {
			if _, err := c.Next(int(min(100, c.Remaining()))); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		// Two 16 KiB chunk slots, scratch, and a 256 KiB read-ahead window
		// (Buffered): a constant well below the 8 MiB scanned.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<10 {
			t.Errorf("%v: scanning 8 MiB allocated %d bytes", a, grew)
		}
		d.Close()
	}
}

// A length read from a corrupt row can ask a cursor for most of what
// CompressionInfo.db claims: the cursor must fail on the chunk that does
// not decompress, having allocated about what it really decoded, not the
// claimed length up front.
func TestCursorSpanAllocatesWhatItDecodes(t *testing.T) {
	lz4c, err := CompressorFor("LZ4Compressor", nil)
	if err != nil {
		t.Fatal(err)
	}
	const chunkLen, fakeChunks = 4096, 16383
	tab := buildCompressed(t, make([]byte, chunkLen), lz4c, chunkLen, chunkLen)
	// Claim 64 MiB: many 5-byte chunks (1 stored byte and a CRC) after
	// the one real chunk, about 80 KiB on disk.
	info := *tab.info
	info.ChunkOffsets = append([]int64(nil), info.ChunkOffsets...)
	data := append([]byte(nil), tab.data...)
	for range fakeChunks {
		info.ChunkOffsets = append(info.ChunkOffsets, int64(len(data)))
		data = append(data, 0x42, 0, 0, 0, 0)
	}
	info.DataLength = int64(chunkLen * (fakeChunks + 1))
	ci := info.Encode(true)
	if ci == nil {
		t.Fatal(info.Validate())
	}
	for _, f := range []File{&memFile{b: data, path: "Data.db"}, readerOnlyFile{&memFile{b: data, path: "Data.db"}}} {
		d, err := newData(f, DataOptions{CompressionInfoPath: "CompressionInfo.db", HasMaxCompressedLength: true}, ci)
		if err != nil {
			t.Fatal(err)
		}
		c := d.Cursor(100)
		want := int(d.Length()) - 200
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, errNext := c.Next(want)
		_, errPeek := c.Peek(want)
		runtime.ReadMemStats(&after)
		if errNext == nil || errPeek == nil {
			t.Fatalf("Next/Peek over undecodable chunks: %v, %v", errNext, errPeek)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%T: asking for %d bytes of a %d-byte file allocated %d bytes", f, want, len(data), got)
		}
	}
}
