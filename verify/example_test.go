package verify_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/verify"
)

// Verify an sstable, then the same one with a byte of Data.db flipped:
// the problem is located by file, component and byte offset.
func ExampleSSTable() {
	dir, err := os.MkdirTemp("", "verify-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := testtables.Example(dir, oa.Version)
	if err != nil {
		log.Fatal(err)
	}

	rep := verify.SSTable(path, sstable.Options{}, nil)
	fmt.Println(rep.OK(), rep.Partitions, "partitions")

	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	b[10] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
	rep = verify.SSTable(path, sstable.Options{}, nil)
	fmt.Println(rep.OK())
	for _, p := range rep.Problems {
		fmt.Println(filepath.Base(p.File), p.Component, "at byte", p.Offset)
	}
	// Output:
	// true 3 partitions
	// false
	// oa-1-big-Data.db Data.db at byte 0
	// oa-1-big-Data.db Digest.crc32 at byte -1
}
