package nc_test

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format/nc"
)

// nc is the last version with the legacy 12-byte DeletionTime, and the
// first with Statistics.db's improved min/max clusterings and key range.
func Example() {
	fmt.Println(nc.Version.Name, nc.DeletionTime)
	fmt.Println("partition header of a 4-byte key:", nc.PartitionHeaderSize(4), "bytes")
	fmt.Println("improved min/max:", nc.Version.HasImprovedMinMax, "key range:", nc.Version.HasKeyRange)
	fmt.Println("unsigned deletion times:", nc.Version.HasUIntDeletionTime)
	// Output:
	// nc legacy
	// partition header of a 4-byte key: 18 bytes
	// improved min/max: true key range: true
	// unsigned deletion times: false
}
