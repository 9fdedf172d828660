package rows_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// Decode Data.db partition by partition: ReadPartitionHeader, then Next
// until it returns nil at the end of the partition, then the next header
// until io.EOF. The decoder reuses one Unfiltered: copy what you keep
// (Unfiltered.Clone).
func ExampleDecoder() {
	dir, err := os.MkdirTemp("", "rows-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := testtables.Example(dir, oa.Version) // ks.readings: sensor int, at int, value text
	if err != nil {
		log.Fatal(err)
	}
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	dec := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		if err := dec.ReadPartitionHeader(&h); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("partition %x at %d, live %v, header %d bytes\n", h.Key, h.Offset, h.Deletion.IsLive(), h.Size)
		for {
			u, err := dec.Next(false)
			if err != nil {
				log.Fatal(err)
			}
			if u == nil {
				break
			}
			fmt.Printf("  %v at %d, %d bytes: clustering %x, %d cell, timestamp %d\n",
				u.Kind, u.Offset, u.Size, u.Clustering[0], len(u.Cells), u.Liveness.Timestamp)
		}
	}
	// Output:
	// partition 00000001 at 0, live true, header 7 bytes
	//   row at 7, 18 bytes: clustering 00000000, 1 cell, timestamp 1700000000012377
	//   row at 25, 18 bytes: clustering 00000001, 1 cell, timestamp 1700000000012378
	// partition 00000000 at 44, live true, header 7 bytes
	//   row at 51, 19 bytes: clustering 00000000, 1 cell, timestamp 1700000000801453
	//   row at 70, 19 bytes: clustering 00000001, 1 cell, timestamp 1700000000801454
	// partition 00000002 at 90, live true, header 7 bytes
	//   row at 97, 19 bytes: clustering 00000000, 1 cell, timestamp 1700000000537330
	//   row at 116, 19 bytes: clustering 00000001, 1 cell, timestamp 1700000000537331
}
