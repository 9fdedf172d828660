package format_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// A component's file name says which sstable it belongs to and in which
// version; the version's flags say what its components hold.
func ExampleParseDescriptor() {
	d, component, err := format.ParseDescriptor("/var/lib/cassandra/data/ks/readings-5bc52802de2535edaeab188eecebb090/nb-12-big-Index.db")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Version.Name, d.Generation, component)
	fmt.Println(d.Path(format.ComponentData))
	fmt.Println("unsigned deletion times:", d.Version.HasUIntDeletionTime, "pending repair:", d.Version.HasPendingRepair)
	table, _ := format.TableOfDir(filepath.Base(d.Dir))
	fmt.Println("table:", table)
	// Output:
	// nb 12 Index.db
	// /var/lib/cassandra/data/ks/readings-5bc52802de2535edaeab188eecebb090/nb-12-big-Data.db
	// unsigned deletion times: false pending repair: true
	// table: readings
}

// Find the sstables under a data directory as the commands do: snapshots
// and backups are copies, skipped unless asked for.
func ExampleFind() {
	root, err := os.MkdirTemp("", "format-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	table := filepath.Join(root, "ks", "readings-5bc52802de2535edaeab188eecebb090")
	if _, err := testtables.Example(table, oa.Version); err != nil {
		log.Fatal(err)
	}
	if _, err := testtables.Example(filepath.Join(table, format.SnapshotsDir, "before-upgrade"), oa.Version); err != nil {
		log.Fatal(err)
	}

	res := format.Find([]string{root}, format.FindOptions{Recursive: true})
	for _, f := range res.SSTables {
		rel, _ := filepath.Rel(root, f.Path)
		fmt.Println("sstable:", rel, f.Err)
	}
	for _, s := range res.Skipped {
		rel, _ := filepath.Rel(root, s.Path)
		fmt.Println("skipped:", rel, "-", s.Reason)
	}
	// Output:
	// sstable: ks/readings-5bc52802de2535edaeab188eecebb090/oa-1-big-Data.db <nil>
	// skipped: ks/readings-5bc52802de2535edaeab188eecebb090/snapshots - snapshot directory (--snapshots includes it)
}

// The versions Cassandra's releases wrote, as the tools offer them: the
// format each belongs to, and the first with compact deletion times.
func ExampleReleased() {
	for _, v := range format.Released() {
		fmt.Print(v.Name, " ", v.Format)
		if v.HasUIntDeletionTime {
			fmt.Print(" (compact deletion times)")
		}
		fmt.Println()
	}
	// Output:
	// ma big
	// mb big
	// mc big
	// md big
	// me big
	// na big
	// nb big
	// nc big
	// oa big (compact deletion times)
	// da bti (compact deletion times)
}
