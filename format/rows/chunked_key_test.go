package rows_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// TestPartitionKeyAcrossChunks reads a partition header whose key spans
// compressed chunks and whose DeletionTime straddles the next boundary: the
// cursor assembles both in one scratch buffer, so the key must be copied
// before the DeletionTime is peeked.
func TestPartitionKeyAcrossChunks(t *testing.T) {
	key := make([]byte, 40)
	for i := range key {
		key[i] = byte('a' + i%26)
	}
	var part []byte
	part = binary.BigEndian.AppendUint16(part, uint16(len(key)))
	part = append(part, key...)
	part = binary.BigEndian.AppendUint32(part, math.MaxInt32) // live localDeletionTime
	part = binary.BigEndian.AppendUint64(part, 1<<63)         // live markedForDeleteAt
	part = append(part, rows.FlagEndOfPartition)

	// 16-byte chunks: the key (bytes 2..42) spans three chunks and the
	// DeletionTime (42..54) crosses from the third into the fourth.
	dir := t.TempDir()
	dataPath := filepath.Join(dir, "nb-1-big-Data.db")
	f, err := os.Create(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := writer.NewDataWriter(f, &writer.Compression{Class: "LZ4Compressor", ChunkLength: 16, MaxCompressedLength: math.MaxInt32}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(part); err != nil {
		t.Fatal(err)
	}
	res, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ciPath := filepath.Join(dir, "nb-1-big-CompressionInfo.db")
	if err := os.WriteFile(ciPath, res.Info.Encode(true), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, access := range []reader.Access{reader.Mmap, reader.Buffered} {
		data, err := reader.OpenData(dataPath, access, reader.DataOptions{CompressionInfoPath: ciPath, HasMaxCompressedLength: true, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		d := rows.NewDecoder(data.Cursor(0), &rows.Schema{Version: mustV("nb")})
		var h rows.PartitionHeader
		if err := d.ReadPartitionHeader(&h); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(h.Key, key) {
			t.Errorf("access %v: key %q, want %q", access, h.Key, key)
		}
		if !h.Deletion.IsLive() || h.Size != len(part)-1 {
			t.Errorf("access %v: deletion %+v size %d", access, h.Deletion, h.Size)
		}
		if u, err := d.Next(false); err != nil || u != nil {
			t.Errorf("access %v: Next = %v, %v; want end of partition", access, u, err)
		}
		data.Close()
	}
}
