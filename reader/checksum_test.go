package reader

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
)

func TestDigestMatchesEveryFixture(t *testing.T) {
	for _, f := range fixtureTables(t) {
		db, err := os.ReadFile(f.digest)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ParseDigestFile(db)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for _, a := range []Access{Mmap, Buffered} {
			file, err := Open(f.data, a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DigestCRC32(file)
			if err != nil || got != want {
				t.Errorf("%s %v: digest %d, Digest.crc32 says %d (%v)", f.name, a, got, want, err)
			}
			file.Close()
		}
	}
}

func TestParseDigestFile(t *testing.T) {
	good := map[string]uint32{"309360903": 309360903, "0": 0, "4294967295\n": 4294967295, "12\r\n": 12}
	for in, want := range good {
		if got, err := ParseDigestFile([]byte(in)); err != nil || got != want {
			t.Errorf("ParseDigestFile(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "\n", "-1", "+5", "4294967296", "12 ", "0x10", "abc"} {
		_, err := ParseDigestFile([]byte(in))
		var ce *corrupt.Error
		if !errors.As(err, &ce) || ce.Component != "Digest.crc32" {
			t.Errorf("ParseDigestFile(%q): %v", in, err)
		}
	}
}

func meFixtures(t *testing.T) []fixtureTable {
	var out []fixtureTable
	for _, f := range fixtureTables(t) {
		if f.crc != "" {
			out = append(out, f)
		}
	}
	if len(out) != 6 {
		t.Fatalf("found %d tables with CRC.db, want the 6 me-collections tables", len(out))
	}
	return out
}

func TestCRCFileVerifiesEveryFixture(t *testing.T) {
	for _, f := range meFixtures(t) {
		b, err := os.ReadFile(f.crc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := DecodeChecksums(b)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if c.ChunkSize != 65536 || len(c.CRCs) != 1 {
			t.Errorf("%s: chunk size %d, %d CRCs", f.name, c.ChunkSize, len(c.CRCs))
		}
		if !bytes.Equal(c.Encode(), b) {
			t.Errorf("%s: Encode differs", f.name)
		}
		for _, a := range []Access{Mmap, Buffered} {
			file, err := Open(f.data, a)
			if err != nil {
				t.Fatal(err)
			}
			if errs := c.Verify(file); len(errs) != 0 {
				t.Errorf("%s %v: %v", f.name, a, errs)
			}
			file.Close()
		}
	}
}

func TestCRCFileFindsDamage(t *testing.T) {
	f := meFixtures(t)[0]
	data, _ := copyFixture(t, f)
	damage(t, data, 40)
	b, _ := os.ReadFile(f.crc)
	c, _ := DecodeChecksums(b)
	for _, a := range []Access{Mmap, Buffered} {
		file, err := Open(data, a)
		if err != nil {
			t.Fatal(err)
		}
		errs := c.Verify(file)
		var ce *corrupt.Error
		if len(errs) != 1 || !errors.As(errs[0], &ce) || !errors.Is(errs[0], corrupt.ErrChecksum) || ce.Offset != 0 || ce.File != data {
			t.Errorf("%v: %v", a, errs)
		}
		file.Close()
	}
	// More chunks of a smaller size: one bad chunk among several, and a
	// count mismatch reported once.
	orig, _ := os.ReadFile(f.data)
	small := &ChunkChecksums{ChunkSize: 16}
	for off := 0; off < len(orig); off += 16 {
		small.CRCs = append(small.CRCs, crcOf(orig[off:min(off+16, len(orig))]))
	}
	file, _ := Open(data, Buffered)
	defer file.Close()
	errs := small.Verify(file)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "chunk 2 ") {
		t.Errorf("16-byte chunks: %v", errs)
	}
	small.CRCs = small.CRCs[:len(small.CRCs)-1]
	if errs := small.Verify(file); len(errs) != 2 {
		t.Errorf("missing CRC: %v", errs)
	}
}

func TestDecodeChecksumsRejects(t *testing.T) {
	for _, b := range [][]byte{nil, {0, 0, 1}, {0, 0, 0, 0}, {0x80, 0, 0, 0}, {0, 0, 1, 0, 1, 2}} {
		_, err := DecodeChecksums(b)
		var ce *corrupt.Error
		if !errors.As(err, &ce) || ce.Component != "CRC.db" {
			t.Errorf("DecodeChecksums(%x): %v", b, err)
		}
	}
}

func TestVerifyChunksUncompressed(t *testing.T) {
	f := meFixtures(t)[0]
	d, err := OpenData(f.data, Mmap, f.options())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if errs := VerifyChunks(d); len(errs) != 1 || !strings.Contains(errs[0].Error(), "CRC.db") {
		t.Errorf("VerifyChunks on uncompressed data: %v", errs)
	}
}
