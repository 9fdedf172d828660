package convert_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// Rewrite an nc sstable as oa into another directory, crash-safely, and
// verified against the source before it is moved into place; the result
// says what each component weighs before and after.
func ExampleConvert() {
	dir, err := os.MkdirTemp("", "convert-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src, err := testtables.Example(filepath.Join(dir, "nc"), nc.Version)
	if err != nil {
		log.Fatal(err)
	}

	res, err := convert.Convert(src, filepath.Join(dir, "oa"), convert.Options{To: oa.Version, Verify: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.From, "->", res.To, filepath.Base(res.Output), "verified:", res.Verified)
	fmt.Println("Data.db uncompressed:", res.DataUncompressed.Before, "->", res.DataUncompressed.After, "bytes")
	for _, c := range res.Components {
		if c.Before != c.After {
			fmt.Printf("%s: %d -> %d\n", c.Name, c.Before, c.After)
		}
	}
	// Output:
	// nc -> oa oa-1-big-Data.db verified: true
	// Data.db uncompressed: 169 -> 136 bytes
	// Data.db: 128 -> 120
	// Statistics.db: 10342 -> 10330
}

// Estimate what a conversion would save without writing anything.
func ExampleEstimate() {
	dir, err := os.MkdirTemp("", "convert-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src, err := testtables.Example(dir, nc.Version)
	if err != nil {
		log.Fatal(err)
	}
	res, err := convert.Estimate(src, convert.Options{To: oa.Version})
	if err != nil {
		log.Fatal(err)
	}
	var before, after int64
	for _, c := range res.Components {
		before, after = before+c.Before, after+c.After
	}
	fmt.Printf("%d partitions: %d -> %d bytes on disk\n", res.Partitions, before, after)
	for _, p := range res.Counts.ByPlace() {
		if p.Live+p.NonLive > 0 {
			fmt.Printf("%s: %d live DeletionTimes, %d not\n", p.Place, p.Live, p.NonLive)
		}
	}
	// Output:
	// 3 partitions: 10715 -> 10695 bytes on disk
	// partition headers: 3 live DeletionTimes, 0 not
}
