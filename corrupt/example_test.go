package corrupt_test

import (
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/stats"
)

// Every decoder's error for bytes that do not match the format is a
// *corrupt.Error: which file and component, the byte offset, and what the
// format requires there.
func Example() {
	_, err := stats.Decode([]byte{0, 0, 0, 200}, oa.Version) // a component count of 200, then nothing
	if ce, ok := corrupt.As(err); ok {
		fmt.Printf("component %s, offset %d: expected %s\n", ce.Component, ce.Offset, ce.Expected)
	}
	// A caller that knows the file names it once.
	err = corrupt.WithFile(err, "/data/ks/t/oa-1-big-Statistics.db")
	fmt.Println(err)
	// Output:
	// component Statistics.db, offset 4: expected table of contents: CRC32 of component count (4 bytes), but only 0 bytes left in the component
	// /data/ks/t/oa-1-big-Statistics.db: Statistics.db at byte 4: expected table of contents: CRC32 of component count (4 bytes), but only 0 bytes left in the component: unexpected EOF
}

// A decoder of a bare buffer reports offsets within it; Place moves them
// to the component and names the file.
func ExamplePlace() {
	err := corrupt.New("", "", 3, "a flags byte", errors.New("unknown flag 0x40"))
	err2 := corrupt.Place(err, "/data/ks/t/oa-1-big-Data.db", "Data.db", 4096)
	fmt.Println(err2)
	var ce *corrupt.Error
	fmt.Println(errors.As(err2, &ce), ce.Offset)
	// Output:
	// /data/ks/t/oa-1-big-Data.db: Data.db at byte 4099: expected a flags byte: unknown flag 0x40
	// true 4099
}
