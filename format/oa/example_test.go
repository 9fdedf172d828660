package oa_test

import (
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/format/oa"
)

// What oa's compact DeletionTime saves: a live partition's header is 11
// bytes shorter than in nc.
func Example() {
	key := 4 // an int partition key
	fmt.Println("nc header:", nc.PartitionHeaderSize(key), "bytes")
	fmt.Println("oa header:", oa.PartitionHeaderSize(key, deletiontime.Live), "bytes")
	fmt.Println("saved per live DeletionTime:", oa.LiveSaving)
	deleted := deletiontime.DeletionTime{MarkedForDeleteAt: 1700000000000000, LocalDeletionTime: 1700000000}
	fmt.Println("oa header of a deleted partition:", oa.PartitionHeaderSize(key, deleted), "bytes")
	// Output:
	// nc header: 18 bytes
	// oa header: 7 bytes
	// saved per live DeletionTime: 11
	// oa header of a deleted partition: 18 bytes
}
