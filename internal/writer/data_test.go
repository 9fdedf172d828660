package writer

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/reader"
)

// Data.db written by DataWriter reads back through the independent reader
// (chunk CRCs checked) in every storage mode: compressed chunks, raw chunks
// at or above maxCompressedLength (the short last one zero-padded), one
// chunk far longer than the data, and uncompressed with CRC.db.
func TestDataWriterReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 200_000)
	for i := range data {
		if i%2 == 0 {
			// Half random: compressible, but never below the 1 KiB
			// threshold of the raw-chunks case for a 4 KiB chunk.
			data[i] = byte(rng.IntN(256))
		} else {
			data[i] = 'a'
		}
	}
	for _, tc := range []struct {
		name string
		comp *Compression
	}{
		{"lz4", &Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1}},
		{"raw-chunks", &Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1024}},
		{"zstd", &Compression{Class: "ZstdCompressor", Options: map[string]string{}, ChunkLength: 8192, MaxCompressedLength: 1<<31 - 1}},
		// One chunk of 1 GiB: the buffer grows with the data (64 KiB at
		// first, past it twice), never to the chunk length.
		{"1GiB-chunk", &Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 1 << 30, MaxCompressedLength: 1<<31 - 1}},
		{"uncompressed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "oa-1-big-Data.db")
			f, _ := os.Create(path)
			w, err := NewDataWriter(f, tc.comp, true)
			if err != nil {
				t.Fatal(err)
			}
			for p := data; len(p) > 0; {
				k := min(len(p), 1+rng.IntN(7000))
				w.Write(p[:k])
				p = p[k:]
			}
			r, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			disk, _ := os.ReadFile(path)
			if r.Digest != crc32.ChecksumIEEE(disk) || r.FileSize != int64(len(disk)) || r.Length != int64(len(data)) {
				t.Fatalf("result %+v does not describe the file (%d bytes)", r, len(disk))
			}
			opts := reader.DataOptions{HasMaxCompressedLength: true, Verify: true}
			if r.Info != nil {
				ci := filepath.Join(dir, "oa-1-big-CompressionInfo.db")
				os.WriteFile(ci, r.Info.Encode(true), 0o644)
				opts.CompressionInfoPath = ci
				if tc.name == "raw-chunks" && r.CompressedBytes < int64(len(data)) {
					t.Errorf("raw chunks stored only %d bytes of %d", r.CompressedBytes, len(data))
				}
			} else {
				df, _ := reader.Open(path, reader.Buffered)
				defer df.Close()
				if errs := r.Checksums.Verify(df); len(errs) > 0 {
					t.Fatalf("CRC.db: %v", errs)
				}
			}
			d, err := reader.OpenData(path, reader.Buffered, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if errs := reader.VerifyChunks(d); r.Info != nil && len(errs) > 0 {
				t.Fatalf("chunk CRCs: %v", errs)
			}
			got := make([]byte, d.Length())
			if _, err := d.ReadAt(got, 0); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatal("data read back differs")
			}
		})
	}
}

// The chunks compressed side by side are written in order: Data.db is the
// same bytes with one compressor as with four, and each stored chunk is
// its uncompressed bytes compressed alone, followed by its CRC32, at the
// offset CompressionInfo.db gives.
func TestDataWriterCompressorsKeepOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(rng.IntN(16)) // compressible, differently per chunk
	}
	comp := &Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1}
	write := func(procs int) ([]byte, *DataResult) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var out bytes.Buffer
		w, err := NewDataWriter(&out, comp, true)
		if err != nil {
			t.Fatal(err)
		}
		for p := data; len(p) > 0; {
			k := min(len(p), 1+rng.IntN(9000))
			w.Write(p[:k])
			p = p[k:]
		}
		r, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), r
	}
	one, _ := write(1)
	four, r := write(4)
	if !bytes.Equal(one, four) {
		t.Fatal("Data.db differs between one compressor and four")
	}
	codec, err := reader.CompressorFor(comp.Class, comp.Options)
	if err != nil {
		t.Fatal(err)
	}
	offsets := r.Info.ChunkOffsets
	if want := (len(data) + comp.ChunkLength - 1) / comp.ChunkLength; len(offsets) != want {
		t.Fatalf("%d chunks, want %d", len(offsets), want)
	}
	for i, off := range offsets {
		plain := data[i*comp.ChunkLength : min(len(data), (i+1)*comp.ChunkLength)]
		want, err := codec.Compress(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		want = binary.BigEndian.AppendUint32(want, crc32.ChecksumIEEE(want))
		if got := four[off:min(int64(len(four)), off+int64(len(want)))]; !bytes.Equal(got, want) {
			t.Fatalf("chunk %d at %d is not its bytes compressed alone with their CRC32", i, off)
		}
	}
}

// SizeBound never promises less than Data.db then takes: at random
// points of a write, the bound for n more bytes is at least the file's
// size once those n bytes are written and the file finished, for every
// compressor on incompressible and compressible data, raw chunks
// (maxCompressedLength) and uncompressed files (where it is exact). Over
// the limit, its answer is the same whatever the number of compressors
// and however far they got (split cuts its sstables on it: the cut must
// not depend on timing).
func TestSizeBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	random := make([]byte, 400_000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog "), 10_000)
	comps := []*Compression{
		{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1},
		{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 3000},
		{Class: "SnappyCompressor", Options: map[string]string{}, ChunkLength: 16384, MaxCompressedLength: 1<<31 - 1},
		{Class: "DeflateCompressor", Options: map[string]string{}, ChunkLength: 8192, MaxCompressedLength: 1<<31 - 1},
		{Class: "ZstdCompressor", Options: map[string]string{}, ChunkLength: 2048, MaxCompressedLength: 1<<31 - 1},
		nil,
	}
	for _, comp := range comps {
		for _, data := range [][]byte{random, text} {
			for trial := range 12 {
				at := rng.IntN(len(data))
				n := rng.IntN(len(data) - at + 1)
				limit := int64(rng.IntN(len(data)))
				var decisions []bool
				var bounds []int64
				for _, procs := range []int{1, 4} {
					old := runtime.GOMAXPROCS(procs)
					var out bytes.Buffer
					w, err := NewDataWriter(&out, comp, true)
					if err != nil {
						t.Fatal(err)
					}
					for p := data[:at]; len(p) > 0; {
						k := min(len(p), 1+rng.IntN(5000))
						w.Write(p[:k])
						p = p[k:]
					}
					b := w.SizeBound(int64(n), limit)
					exact := w.SizeBound(int64(n), -1) // always settled
					decisions = append(decisions, b <= limit)
					bounds = append(bounds, exact)
					w.Write(data[at : at+n])
					r, err := w.Finish()
					runtime.GOMAXPROCS(old)
					if err != nil {
						t.Fatal(err)
					}
					if r.FileSize > exact || r.FileSize > b {
						t.Fatalf("%v trial %d: Data.db takes %d bytes, the bound said %d (settled %d)", comp, trial, r.FileSize, b, exact)
					}
					if comp == nil && exact != r.FileSize {
						t.Fatalf("uncompressed: bound %d, file %d", exact, r.FileSize)
					}
				}
				if decisions[0] != decisions[1] || bounds[0] != bounds[1] {
					t.Fatalf("%v trial %d: one compressor says %v (%d), four %v (%d)", comp, trial, decisions[0], bounds[0], decisions[1], bounds[1])
				}
			}
		}
	}
}

// CompressionOfTable reads a table's compression map as
// CompressionParams.fromMap does: what system_schema.tables holds for
// Cassandra 3.x and 4.x+ defaults, a disabled one, 3.0's legacy names,
// min_compress_ratio, Zstd's level; and refuses what Cassandra refuses.
func TestCompressionOfTable(t *testing.T) {
	const lz4 = "org.apache.cassandra.io.compress.LZ4Compressor"
	for _, c := range []struct {
		opts       map[string]string
		defaultKiB int
		want       *Compression // nil: uncompressed
	}{
		{map[string]string{"chunk_length_in_kb": "64", "class": lz4}, 16,
			&Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 64 << 10, MaxCompressedLength: math.MaxInt32}},
		{map[string]string{"class": "LZ4Compressor"}, 16,
			&Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 16 << 10, MaxCompressedLength: math.MaxInt32}},
		{map[string]string{"sstable_compression": "SnappyCompressor", "chunk_length_kb": "32", "crc_check_chance": "0.5"}, 64,
			&Compression{Class: "SnappyCompressor", Options: map[string]string{}, ChunkLength: 32 << 10, MaxCompressedLength: math.MaxInt32}},
		{map[string]string{"class": "DeflateCompressor", "chunk_length_in_kb": "4", "min_compress_ratio": "1.1"}, 16,
			&Compression{Class: "DeflateCompressor", Options: map[string]string{}, ChunkLength: 4 << 10, MaxCompressedLength: 3724}}, // ceil(4096/1.1)
		{map[string]string{"class": "ZstdCompressor", "compression_level": "7"}, 16,
			&Compression{Class: "ZstdCompressor", Options: map[string]string{"compression_level": "7"}, OptionKeys: []string{"compression_level"}, ChunkLength: 16 << 10, MaxCompressedLength: math.MaxInt32}},
		{map[string]string{"enabled": "false"}, 16, nil},
		{map[string]string{}, 16, nil},
	} {
		got, err := CompressionOfTable(c.opts, c.defaultKiB)
		if err != nil {
			t.Errorf("%v: %v", c.opts, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%v: (-want +got)\n%s", c.opts, diff)
		}
	}
	for _, bad := range []map[string]string{
		{"chunk_length_in_kb": "64"},             // no class
		{"class": "com.example.Custom"},          // not Cassandra's
		{"class": "LZ4Compressor", "level": "3"}, // not LZ4's option
		{"class": "LZ4Compressor", "chunk_length_in_kb": "48"},
		{"class": "LZ4Compressor", "min_compress_ratio": "0.5"},
	} {
		if got, err := CompressionOfTable(bad, 16); err == nil {
			t.Errorf("%v: %+v, want an error", bad, got)
		}
	}
}
