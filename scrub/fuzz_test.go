package scrub

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// fuzzBases are small generated sstables the fuzz target damages: an
// uncompressed oa table (damage reaches the decoder once CRC.db is
// resealed), an lz4 one with 4 KiB chunks (damage fails chunk CRCs), and
// a da one.
var fuzzBases struct {
	once  sync.Once
	paths []string
	files []map[string][]byte
}

func fuzzBase(t testing.TB, i int) (string, map[string][]byte) {
	fuzzBases.once.Do(func() {
		dir, err := os.MkdirTemp("", "scrub-fuzz-base-")
		if err != nil {
			t.Fatal(err)
		}
		lz4 := &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1}
		for k, o := range []struct {
			v string
			g generate.Options
		}{{"oa", generate.Options{Uncompressed: true, ColumnIndexSize: 512}}, {"nc", generate.Options{Compression: lz4, ColumnIndexSize: 512}}, {"da", generate.Options{Uncompressed: true, ColumnIndexSize: 512}}} {
			p := generatedIn(t, filepath.Join(dir, string(rune('a'+k))), "demo", 40, o.v, o.g)
			fuzzBases.paths = append(fuzzBases.paths, p)
			fuzzBases.files = append(fuzzBases.files, readAll(t, filepath.Dir(p)))
		}
	})
	i %= len(fuzzBases.paths)
	return fuzzBases.paths[i], fuzzBases.files[i]
}

// FuzzScrub damages a generated sstable with the input (patches of Data.db
// and Index.db or Partitions.db: 4-byte offset, then a byte to XOR there,
// repeated; the first byte picks the table and whether CRC.db is resealed
// so the damage reaches the decoder) and scrubs it: scrub never panics,
// never allocates without bound, and whatever it writes verifies (it
// refuses to move an output that does not into place, which fails here).
func FuzzScrub(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 100, 0xff})
	f.Add([]byte{1, 0, 0, 0, 50, 0x01, 0, 0, 16, 0, 0x80})
	f.Add([]byte{2, 0, 0, 1, 0, 0x10})
	f.Add([]byte{3, 0, 1, 0, 0, 0xff, 0, 1, 0, 1, 0xff})
	f.Add([]byte{4, 0x40, 0, 0, 3, 0x22}) // high offset: the index
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 1+5*64 {
			return
		}
		src, files := fuzzBase(t, int(in[0]))
		reseal := in[0]&4 != 0
		dir := filepath.Join(fastTemp(t), "src")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		desc, _, _ := format.ParseDescriptor(src)
		data := append([]byte(nil), files[desc.Prefix()+format.ComponentData]...)
		idxName := desc.Prefix() + format.ComponentIndex
		if desc.Version.IsBTI() {
			idxName = desc.Prefix() + format.ComponentPartitions
		}
		idx := append([]byte(nil), files[idxName]...)
		for p := in[1:]; len(p) >= 5; p = p[5:] {
			off := int(binary.BigEndian.Uint32(p))
			switch {
			case off&0x40000000 != 0 && len(idx) > 0:
				idx[(off&0xffffff)%len(idx)] ^= p[4]
			case len(data) > 0:
				data[off%len(data)] ^= p[4]
			}
		}
		for name, b := range files {
			switch name {
			case desc.Prefix() + format.ComponentData:
				b = data
			case idxName:
				b = idx
			case desc.Prefix() + format.ComponentCRC:
				if reseal {
					b = resealed(b, data)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := Scrub(filepath.Join(dir, desc.Prefix()+format.ComponentData), filepath.Join(filepath.Dir(dir), "out"), Options{ColumnIndexSize: 512})
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
			t.Fatalf("scrub of a %d-byte Data.db allocated %d MB", len(data), grew>>20)
		}
		if err != nil && strings.Contains(err.Error(), "does not verify") {
			if rep != nil {
				t.Logf("notes: %v rows %v", rep.Notes, rep.Rows)
			}
			t.Fatal(err)
		}
		if err != nil {
			return // unscrubbable: named, not a panic
		}
		for _, o := range rep.Outputs {
			mustVerify(t, o)
		}
	})
}

// resealed is CRC.db recomputed over data (its chunk size kept).
func resealed(crc, data []byte) []byte {
	if len(crc) < 4 {
		return crc
	}
	chunk := int(binary.BigEndian.Uint32(crc))
	if chunk <= 0 {
		return crc
	}
	out := append([]byte(nil), crc[:4]...)
	for off := 0; off < len(data); off += chunk {
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(data[off:min(off+chunk, len(data))]))
	}
	return out
}
