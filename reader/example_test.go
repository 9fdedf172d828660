package reader_test

import (
	"fmt"
	"log"
	"os"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/reader"
)

// Open a compressed Data.db through its CompressionInfo.db and read it as
// uncompressed bytes: each chunk's CRC32 is checked, then the chunk is
// decompressed, once per pass.
func ExampleOpenData() {
	dir, err := os.MkdirTemp("", "reader-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := testtables.Example(dir, oa.Version)
	if err != nil {
		log.Fatal(err)
	}
	desc, _, _ := format.ParseDescriptor(path)

	d, err := reader.OpenData(path, reader.Mmap, reader.DataOptions{
		CompressionInfoPath:    desc.Path(format.ComponentCompressionInfo),
		HasMaxCompressedLength: desc.Version.HasMaxCompressedLength,
		Verify:                 true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	fmt.Println(d.Info().Compressor, d.Info().ChunkLength, "byte chunks,", len(d.Info().ChunkOffsets), "of them")
	fmt.Println("uncompressed length:", d.Length())
	head := make([]byte, 7)
	if _, err := d.ReadAt(head, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("first partition header: % x\n", head)
	fmt.Println("chunks with a bad CRC:", len(reader.VerifyChunks(d)))
	// Output:
	// LZ4Compressor 16384 byte chunks, 1 of them
	// uncompressed length: 136
	// first partition header: 00 04 00 00 00 01 80
	// chunks with a bad CRC: 0
}
