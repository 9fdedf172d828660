package scrub_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/scrub"
)

// Rebuild an sstable's lost index and filter, then salvage one whose only
// Data.db chunk was damaged: nothing of it can be read, and the report
// names every partition lost by the key Index.db has for it.
func ExampleScrub() {
	dir, err := os.MkdirTemp("", "scrub-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src, err := testtables.Example(filepath.Join(dir, "src"), oa.Version)
	if err != nil {
		log.Fatal(err)
	}
	prefix := strings.TrimSuffix(src, "Data.db")

	// 1. Index.db and Filter.db are gone: rebuilt from Data.db.
	for _, c := range []string{"Index.db", "Filter.db"} {
		if err := os.Rename(prefix+c, filepath.Join(dir, c)); err != nil {
			log.Fatal(err)
		}
	}
	rep, err := scrub.Scrub(src, filepath.Join(dir, "rebuilt"), scrub.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Summary(), "| verified:", rep.Verified)
	for _, c := range rep.Components {
		if c.How == "rebuilt" {
			fmt.Println("rebuilt", c.Name+":", c.Why)
		}
	}

	// 2. The index back, and a byte of the only compressed chunk flipped.
	for _, c := range []string{"Index.db", "Filter.db"} {
		if err := os.Rename(filepath.Join(dir, c), prefix+c); err != nil {
			log.Fatal(err)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		log.Fatal(err)
	}
	data[10] ^= 0xff
	if err := os.WriteFile(src, data, 0o644); err != nil {
		log.Fatal(err)
	}
	rep, err = scrub.Scrub(src, filepath.Join(dir, "salvaged"), scrub.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Summary(), "| outputs:", len(rep.Outputs))
	for _, l := range rep.Lost {
		fmt.Printf("lost sensor %s (key from %s) at byte %d\n", l.Key, l.KeyFrom, l.Position)
	}
	// Output:
	// 3 partitions kept, 0 lost; rebuilt Index.db, Summary.db, Filter.db | verified: true
	// rebuilt Index.db: missing
	// rebuilt Summary.db: rebuilt with Index.db (missing)
	// rebuilt Filter.db: missing
	// 0 partitions kept, 3 lost | outputs: 0
	// lost sensor 1 (key from Index.db) at byte 0
	// lost sensor 0 (key from Index.db) at byte 44
	// lost sensor 2 (key from Index.db) at byte 90
}
