package reader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
)

// FuzzCompressionInfo: any bytes either fail with a *corrupt.Error or decode
// to something that encodes back to exactly those bytes.
func FuzzCompressionInfo(f *testing.F) {
	for _, t := range []string{"nb/legacy_nb_clust/nb", "oa/legacy_oa_simple/oa"} {
		if b, err := os.ReadFile(fuzzFixture(t) + "-1-big-CompressionInfo.db"); err == nil {
			f.Add(b, true)
			f.Add(b, false)
		}
	}
	info := &CompressionInfo{Compressor: "Zstd\x00é😀", Options: map[string]string{"k": "v"}, OptionKeys: []string{"k"}, ChunkLength: 1, MaxCompressedLength: 1, DataLength: 2, ChunkOffsets: []int64{0, 9}}
	f.Add(info.Encode(true), true)
	f.Fuzz(func(t *testing.T, b []byte, hasMax bool) {
		info, err := DecodeCompressionInfo(b, hasMax)
		if err != nil {
			var ce *corrupt.Error
			if !errors.As(err, &ce) || ce.Component != "CompressionInfo.db" || ce.Offset < 0 || ce.Offset > int64(len(b)) {
				t.Fatalf("error %v is not a located *corrupt.Error", err)
			}
			return
		}
		// A short chunk count and stray bytes decode, as Cassandra reads
		// them, but are not what Encode writes; everything else, what Check
		// flags included (extra chunks, a max compressed length
		// CompressionParams refuses), must come back byte for byte.
		if len(info.ChunkOffsets) < info.DataChunks() {
			if info.Encode(hasMax) != nil {
				t.Fatalf("Encode wrote a CompressionInfo whose chunk count is short: %+v", info)
			}
			return
		}
		if info.TrailingBytes > 0 {
			return
		}
		if got := info.Encode(hasMax); !bytes.Equal(got, b) {
			t.Fatalf("Encode(Decode(b)) != b\n got %x\nwant %x", got, b)
		}
	})
}

func fuzzFixture(rel string) string {
	if r := fixturesRoot(); r != "" {
		return r + "/cassandra/" + rel
	}
	return "/nonexistent/" + rel
}

// FuzzChunkReader treats the input as a CompressionInfo.db and a Data.db
// (split at cut) and reads everything through both code paths: it must
// return errors, never panic, allocate beyond the inputs, or hand out
// bytes that fail their CRC.
func FuzzChunkReader(f *testing.F) {
	comp, _ := CompressorFor("LZ4Compressor", nil)
	tab := buildCompressed(f, syntheticRows(3000), comp, 1024, 1<<31-1)
	f.Add(tab.ci, tab.data, true, uint16(0))
	raw := buildCompressed(f, syntheticRows(700), comp, 256, 200)
	f.Add(raw.ci, raw.data, true, uint16(3))
	dc, _ := CompressorFor("DeflateCompressor", nil)
	df := buildCompressed(f, syntheticRows(900), dc, 512, 1<<31-1)
	f.Add(df.ci, df.data, false, uint16(7))
	f.Fuzz(fuzzChunkReader)
}

func fuzzChunkReader(t *testing.T, ci, data []byte, verify bool, seed uint16) {
	before := allocatedBytes()
	// seed picks the code path: mapped or Buffered access (bit 0), and
	// compressed with or without a max compressed length, or uncompressed
	// (seed/2 % 3). One path per run keeps executions fast.
	mf := &memFile{b: data, path: "fuzz-Data.db"}
	var file File = mf
	if seed&1 == 1 {
		file = readerOnlyFile{mf}
	}
	o := []DataOptions{
		{CompressionInfoPath: "fuzz-CompressionInfo.db", HasMaxCompressedLength: true, Verify: verify},
		{CompressionInfoPath: "fuzz-CompressionInfo.db", HasMaxCompressedLength: false, Verify: verify},
		{Verify: verify},
	}[int(seed/2)%3]
	d, err := newData(file, o, ci)
	if err != nil {
		var ce *corrupt.Error
		if !errors.As(err, &ce) || ce.File != o.CompressionInfoPath {
			t.Fatalf("newData: %v is not a *corrupt.Error naming the file", err)
		}
		return
	}
	fuzzRead(t, d, int(seed/6))
	if d.Compressed() {
		for _, err := range VerifyChunks(d) {
			var ce *corrupt.Error
			if !errors.As(err, &ce) || ce.Component != "Data.db" {
				t.Fatalf("VerifyChunks: %v", err)
			}
		}
	}
	// Decompressed chunks may legitimately outgrow their stored bytes
	// (zstd by up to 32768×), but nothing may scale with lengths the input
	// merely claims. (Each fuzz worker is its own process, and runs one
	// input at a time, so the count is this run's.)
	limit := uint64(zstdMaxRatio*(len(ci)+len(data))) + 8<<20
	if grew := allocatedBytes() - before; grew > limit {
		t.Fatalf("allocated %d bytes for %d input bytes", grew, len(ci)+len(data))
	}
}

// allocatedBytes is the process's cumulative heap allocation, read without
// stopping the world (runtime.ReadMemStats costs ~150µs per call).
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func fuzzRead(t *testing.T, d *Data, seed int) {
	c := d.Cursor(0)
	steps := []int{1, 3, 17, 255, 1000, 5000}
	for i := 0; i < 64 && c.Remaining() > 0; i++ {
		n := steps[(seed+i)%len(steps)]
		if p, err := c.Peek(n); err != nil && err != io.EOF {
			checkFuzzErr(t, err)
			return
		} else if int64(len(p)) > c.Remaining() {
			t.Fatalf("Peek returned %d bytes with %d remaining", len(p), c.Remaining())
		}
		b, err := c.Next(int(min(int64(n), c.Remaining())))
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		if len(b) != int(min(int64(n), int64(len(b)))) {
			t.Fatal("short Next")
		}
	}
	p := make([]byte, 64)
	if _, err := d.ReadAt(p, int64(seed)%max(d.Length(), 1)); err != nil && err != io.EOF {
		checkFuzzErr(t, err)
	}
}

func checkFuzzErr(t *testing.T, err error) {
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.Component != "Data.db" {
		t.Fatalf("read error %v is not a Data.db *corrupt.Error", err)
	}
}

// FuzzDecompress: every codec, fed arbitrary bytes, returns an error or
// output within the requested limit.
func FuzzDecompress(f *testing.F) {
	for _, cc := range allCompressors {
		c, _ := CompressorFor(cc.class, cc.options)
		z, _ := c.Compress(nil, syntheticRows(500))
		f.Add(cc.class, z, uint16(500))
	}
	f.Add("LZ4Compressor", []byte{0xFF, 0xFF, 0xFF, 0x7F, 0x1F, 0x00, 0x00}, uint16(100))
	f.Fuzz(func(t *testing.T, class string, src []byte, limit uint16) {
		c, err := CompressorFor(class, nil)
		if err != nil {
			return
		}
		out, err := c.(limitedDecompressor).decompressLimit(nil, src, int(limit))
		if err == nil && len(out) > int(limit) {
			t.Fatalf("%s: %d bytes out with limit %d", class, len(out), limit)
		}
		if _, err := c.Decompress(nil, src); err == nil {
			// Anything that decodes must re-encode and decode to itself.
			again, err := c.Decompress(nil, src)
			if err != nil {
				t.Fatal("second decode failed")
			}
			z, err := c.Compress(nil, again)
			if err != nil {
				t.Fatal(err)
			}
			back, err := c.Decompress(nil, z)
			if err != nil || !bytes.Equal(back, again) {
				t.Fatalf("%s: re-encoded output does not round-trip: %v", class, err)
			}
		}
	})
}

// FuzzChecksumFiles covers CRC.db and Digest.crc32 decoding.
func FuzzChecksumFiles(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0x7e, 0xfe, 0x10, 0xd1})
	f.Add([]byte("309360903"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := DecodeChecksums(b); err == nil {
			if !bytes.Equal(c.Encode(), b) {
				t.Fatal("CRC.db does not round-trip")
			}
			c.Verify(&memFile{b: b, path: "x"})
		} else if !errors.As(err, new(*corrupt.Error)) {
			t.Fatal(err)
		}
		if v, err := ParseDigestFile(b); err == nil {
			// Whatever parses is the decimal text Java writes, maybe with a line end.
			s := strings.TrimRight(string(b), "\r\n")
			if n, _ := strconv.ParseUint(s, 10, 64); s == "" || strings.Trim(s, "0123456789") != "" || n != uint64(v) {
				t.Fatalf("ParseDigestFile(%q) = %d", b, v)
			}
		} else if !errors.As(err, new(*corrupt.Error)) {
			t.Fatal(err)
		}
	})
}
