package clustering_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/format/clustering"
)

// A row's clustering as Data.db stores it: a header of null/empty bits for
// each block of 32 values, then each value, with a length unless its type
// has a fixed width.
func ExampleAppendValues() {
	fixed := []int{4, -1} // an int, then a text
	b, err := clustering.AppendValues(nil, [][]byte{{0, 0, 0, 7}, []byte("north")}, fixed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("% x\n", b)
	vals, n, err := clustering.DecodeValues(nil, b, 2, fixed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes: %x %q\n", n, vals[0], vals[1])
	// A null value takes no bytes, only its header bit.
	b, _ = clustering.AppendValues(nil, [][]byte{{0, 0, 0, 7}, nil}, fixed)
	fmt.Printf("% x\n", b)
	// Output:
	// 00 00 00 00 07 05 6e 6f 72 74 68
	// 11 bytes: 00000007 "north"
	// 08 00 00 00 07
}
