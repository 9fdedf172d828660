package deletiontime_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// The two layouts of a DeletionTime: legacy (ma..nc, 12 bytes: int
// localDeletionTime, long markedForDeleteAt) and oa's compact one (one
// 0x80 byte for LIVE, else long markedForDeleteAt, unsigned int).
func Example() {
	d := deletiontime.DeletionTime{MarkedForDeleteAt: 1700000000000000, LocalDeletionTime: 1700000000}
	for _, l := range []deletiontime.Layout{deletiontime.Legacy, deletiontime.Compact} {
		live, err := l.Append(nil, deletiontime.Live)
		if err != nil {
			log.Fatal(err)
		}
		dead, err := l.Append(nil, d)
		if err != nil {
			log.Fatal(err)
		}
		back, n, err := l.Decode(dead)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: live % x; deleted % x (%d bytes, decodes back: %v)\n", l, live, dead, n, back == d)
	}
	// Output:
	// legacy: live 7f ff ff ff 80 00 00 00 00 00 00 00; deleted 65 53 f1 00 00 06 0a 24 18 1e 40 00 (12 bytes, decodes back: true)
	// compact: live 80; deleted 00 06 0a 24 18 1e 40 00 65 53 f1 00 (12 bytes, decodes back: true)
}

// A localDeletionTime past 2038 fits oa's unsigned int but not the legacy
// signed one: Check says so before a conversion writes it.
func ExampleLayout_Check() {
	late := deletiontime.DeletionTime{MarkedForDeleteAt: 2200000000000000, LocalDeletionTime: 2200000000}
	fmt.Println(deletiontime.Compact.Check(late))
	fmt.Println(deletiontime.Legacy.Check(late))
	// Output:
	// <nil>
	// deletiontime: legacy layout cannot hold markedForDeleteAt=2200000000000000 localDeletionTime=2200000000: localDeletionTime does not fit a signed 32-bit int (past 2038)
}
