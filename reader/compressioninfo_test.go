package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

func TestCompressionInfoFixturesRoundTrip(t *testing.T) {
	n := 0
	for _, f := range fixtureTables(t) {
		if f.ci == "" {
			continue
		}
		n++
		b, err := os.ReadFile(f.ci)
		if err != nil {
			t.Fatal(err)
		}
		info, err := DecodeCompressionInfo(b, true)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if got := info.Encode(true); !bytes.Equal(got, b) {
			t.Errorf("%s: Encode differs from the file:\n got %x\nwant %x", f.name, got, b)
		}
		// Facts any reader of these files sees: LZ4, 16 KiB chunks, no
		// raw-chunk threshold (Integer.MAX_VALUE), first chunk at 0.
		if info.Compressor != "LZ4Compressor" || info.ChunkLength != 16384 || info.MaxCompressedLength != 1<<31-1 || info.ChunkOffsets[0] != 0 || len(info.Options) != 0 {
			t.Errorf("%s: unexpected header %+v", f.name, info)
		}
	}
	if n != 14 { // nb, nc, oa: 4 each; da: 2
		t.Errorf("found %d compressed fixtures, want 14", n)
	}
}

func TestCompressionInfoKnownValues(t *testing.T) {
	b, err := os.ReadFile(nbClustCI(t))
	if err != nil {
		t.Fatal(err)
	}
	info, err := DecodeCompressionInfo(b, true)
	if err != nil {
		t.Fatal(err)
	}
	// legacy_nb_clust: read off the bytes with xxd.
	if info.DataLength != 336016 || len(info.ChunkOffsets) != 21 || info.ChunkOffsets[1] != 0x1a8 || info.ChunkOffsets[20] != 0x2100 {
		t.Errorf("legacy_nb_clust: DataLength %d, %d chunks, offsets %v", info.DataLength, len(info.ChunkOffsets), info.ChunkOffsets)
	}
	if info.OffsetPosition(0) != 39 {
		t.Errorf("OffsetPosition(0) = %d, want 39", info.OffsetPosition(0))
	}
}

func TestCompressionInfoWithoutMaxCompressedLength(t *testing.T) {
	// A pre-na file is the same minus the 4-byte max compressed length
	// after the chunk length.
	b, err := os.ReadFile(nbClustCI(t))
	if err != nil {
		t.Fatal(err)
	}
	at := 2 + len("LZ4Compressor") + 4 + 4
	old := append(append([]byte(nil), b[:at]...), b[at+4:]...)
	info, err := DecodeCompressionInfo(old, false)
	if err != nil {
		t.Fatal(err)
	}
	if info.MaxCompressedLength != 0 || info.DataLength != 336016 {
		t.Errorf("pre-na decode: %+v", info)
	}
	if !bytes.Equal(info.Encode(false), old) {
		t.Error("pre-na Encode differs")
	}
	if info.rawThreshold(false) != 1<<31-1 {
		t.Error("pre-na files must never have raw chunks")
	}
	// The same bytes read with the wrong flag do not parse.
	if _, err := DecodeCompressionInfo(old, true); err == nil {
		t.Error("pre-na bytes decoded as na")
	}
}

func TestCompressionInfoOptionsAndStrings(t *testing.T) {
	info := &CompressionInfo{
		Compressor:  "ZstdCompressor",
		Options:     map[string]string{"compression_level": "7", "z\x00key": "😀 é"},
		OptionKeys:  []string{"z\x00key", "compression_level"},
		ChunkLength: 65536, MaxCompressedLength: 65536, DataLength: 65537,
		ChunkOffsets: []int64{0, 100},
	}
	b := info.Encode(true)
	// Java's writeUTF: NUL is C0 80, U+1F600 is a surrogate pair of 3-byte forms.
	if !bytes.Contains(b, []byte{0, 6, 'z', 0xC0, 0x80, 'k', 'e', 'y'}) {
		t.Errorf("NUL not written as C0 80: %x", b)
	}
	if !bytes.Contains(b, []byte{0, 9, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80, ' ', 0xC3, 0xA9}) {
		t.Errorf("supplementary character not written as surrogates: %x", b)
	}
	got, err := DecodeCompressionInfo(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(info, got, cmpopts.IgnoreUnexported(CompressionInfo{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got.Encode(true), b) {
		t.Error("second Encode differs")
	}
}

func TestModifiedUTF8(t *testing.T) {
	good := map[string]string{
		"":                         "",
		"abc":                      "abc",
		"\xC0\x80":                 "\x00",
		"\xC3\xA9":                 "é",
		"\xE2\x82\xAC":             "€",
		"\xED\xA0\xBD\xED\xB8\x80": "😀",
		"\xED\xA0\x80":             "\xED\xA0\x80", // lone high surrogate kept as WTF-8
		"\xED\xB0\x80x":            "\xED\xB0\x80x",
	}
	for in, want := range good {
		got, err := decodeModifiedUTF8([]byte(in))
		if err != nil || got != want {
			t.Errorf("decode %x = %q, %v; want %q", in, got, err, want)
		}
		if back := encodeModifiedUTF8(nil, got); string(back) != in {
			t.Errorf("encode %q = %x, want %x", got, back, in)
		}
	}
	for _, bad := range []string{"\x00", "\xC1\x81", "\xE0\x81\x81", "\xC3", "\xE2\x82", "\xF0\x9F\x98\x80", "\x80", "\xC3\x41"} {
		if _, err := decodeModifiedUTF8([]byte(bad)); !errors.Is(err, errBadModifiedUTF8) {
			t.Errorf("decode %x: err %v, want errBadModifiedUTF8", bad, err)
		}
	}
}

func TestCompressionInfoTruncated(t *testing.T) {
	b, err := os.ReadFile(nbClustCI(t))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		_, err := DecodeCompressionInfo(b[:n], true)
		var ce *corrupt.Error
		if !errors.As(err, &ce) {
			t.Fatalf("prefix of %d bytes: %v, want *corrupt.Error", n, err)
		}
		if ce.Component != "CompressionInfo.db" || ce.Offset < 0 || ce.Offset > int64(n) || ce.Expected == "" {
			t.Fatalf("prefix of %d bytes: %+v", n, ce)
		}
	}
	// Cassandra never reads past the offsets: a stray byte decodes, and
	// Check reports it where it lies.
	info, err := DecodeCompressionInfo(append(append([]byte(nil), b...), 0), true)
	if err != nil {
		t.Fatalf("trailing byte refused: %v", err)
	}
	var ce *corrupt.Error
	if errs := info.Check("x"); len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Offset != int64(len(b)) {
		t.Errorf("trailing byte: Check = %v, want one error at %d", errs, len(b))
	}
}

func TestCompressionInfoRejects(t *testing.T) {
	base, err := os.ReadFile(nbClustCI(t))
	if err != nil {
		t.Fatal(err)
	}
	const (
		optCount = 15
		chunkLen = 19
		maxLen   = 23
		dataLen  = 27
		count    = 35
		offsets  = 39
	)
	put32 := func(at int, v uint32) []byte {
		b := append([]byte(nil), base...)
		binary.BigEndian.PutUint32(b[at:], v)
		return b
	}
	put64 := func(at int, v uint64) []byte {
		b := append([]byte(nil), base...)
		binary.BigEndian.PutUint64(b[at:], v)
		return b
	}
	cases := map[string]struct {
		b  []byte
		at int64
	}{
		"huge option count":       {put32(optCount, 1<<30), optCount},
		"negative option count":   {put32(optCount, 0xFFFFFFFF), optCount},
		"chunk length not pow2":   {put32(chunkLen, 16000), chunkLen},
		"zero chunk length":       {put32(chunkLen, 0), chunkLen},
		"negative max compressed": {put32(maxLen, 0x80000000), maxLen},
		"negative data length":    {put64(dataLen, 1<<63), dataLen},
		"huge chunk count":        {put32(count, 1<<31-1), count},
		"zero chunk count":        {put32(count, 0), count},
		"offsets 3 bytes apart":   {put64(offsets+8, 3), offsets + 8},
		"offsets not increasing":  {put64(offsets+8*5, 3), offsets + 8*5},
		"negative offset":         {put64(offsets, 1<<63), offsets},
	}
	for name, c := range cases {
		_, err := DecodeCompressionInfo(c.b, true)
		var ce *corrupt.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want *corrupt.Error", name, err)
			continue
		}
		if ce.Offset != c.at {
			t.Errorf("%s: offset %d, want %d (%v)", name, ce.Offset, c.at, err)
		}
	}
	dup := &CompressionInfo{Compressor: "LZ4Compressor", Options: map[string]string{"a": "1"}, OptionKeys: []string{"a", "a"}, ChunkLength: 4, DataLength: 1, ChunkOffsets: []int64{0}}
	if dup.Encode(true) != nil || dup.Validate() == nil {
		t.Error("Encode accepted duplicate option keys")
	}
	// A hand-built duplicate in the bytes is caught by the decoder.
	dup.OptionKeys = []string{"a"}
	b := dup.Encode(true)
	b2 := append(append(append([]byte(nil), b[:2+13]...), 0, 0, 0, 2), b[2+13+4:2+13+4+6]...)
	b2 = append(b2, b[2+13+4:]...)
	if _, err := DecodeCompressionInfo(b2, true); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("duplicate option key: %v", err)
	}
}

// TestCompressionInfoChunkCountAsCassandraReads: the count is never compared
// with the data length by Cassandra's reader. One more chunk decodes
// silently (real writers end with an empty one); more, or fewer, decode
// too, and Check names the count; an empty Data.db keeps its one chunk.
func TestCompressionInfoChunkCountAsCassandraReads(t *testing.T) {
	base, err := os.ReadFile(nbClustCI(t))
	if err != nil {
		t.Fatal(err)
	}
	const dataLen, count = 27, 35
	info, err := DecodeCompressionInfo(base, true)
	if err != nil {
		t.Fatal(err)
	}
	chunks := info.ChunkCount()
	withLength := func(n int64) *CompressionInfo {
		b := append([]byte(nil), base...)
		binary.BigEndian.PutUint64(b[dataLen:], uint64(n))
		got, err := DecodeCompressionInfo(b, true)
		if err != nil {
			t.Fatalf("data length %d: %v", n, err)
		}
		return got
	}
	// One chunk more than the data needs: fine, nothing to report.
	if c := withLength(int64(chunks-1) * 16384); len(c.Check("x")) != 0 || c.DataChunks() != chunks-1 {
		t.Errorf("extra chunk: DataChunks %d, Check %v", c.DataChunks(), c.Check("x"))
	}
	// Zero data length (a zeroed field): one (empty) chunk is what a
	// writer leaves, so 21 contradict it; Check names the count (Data
	// takes the length from the chunks, and VerifyChunks examines them).
	if c := withLength(0); c.DataChunks() != 1 || len(c.Check("x")) != 1 || !strings.Contains(c.Check("x")[0].Error(), "the data length is damaged") {
		t.Errorf("zero data length: DataChunks %d, Check %v", c.DataChunks(), c.Check("x"))
	}
	// More data than chunks: decodes; Check names the count's offset.
	c := withLength(int64(chunks+5) * 16384)
	var ce *corrupt.Error
	if errs := c.Check("x"); len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Offset != count {
		t.Errorf("short count: Check = %v, want one error at %d", errs, count)
	}
	if c.Validate() == nil {
		t.Error("Validate accepts a count below what the data length needs")
	}
}

func nbClustCI(t *testing.T) string {
	return filepath.Join(fixtures.Table(t, "nb", "legacy_nb_clust"), "nb-1-big-CompressionInfo.db")
}
