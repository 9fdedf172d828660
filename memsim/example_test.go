package memsim_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/memsim"
	"github.com/sstabletool/sstabletool/workload"
)

// Replay a workload into Cassandra's skip-list and trie memtables and read
// what each would hold on and off heap, as Cassandra accounts it.
func ExampleReplay() {
	p, ok := workload.Builtin("small-partitions") // ReadSmallPartitionsBench's table and writes
	if !ok {
		log.Fatal("no such profile")
	}
	res, err := memsim.Replay(memsim.GeneratorSource(p, 10000), memsim.Options{
		Kinds: []memsim.Kind{memsim.SkipList, memsim.Trie},
		Types: []memsim.AllocType{memsim.OffheapObjects},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Printf("%s %s: %d partitions, %d bytes on heap, %d off heap\n", r.Memtable, r.Allocation, r.Partitions, r.OnHeap, r.OffHeap)
	}
	// Output:
	// skiplist offheap_objects: 10000 partitions, 4040000 bytes on heap, 560000 off heap
	// trie offheap_objects: 10000 partitions, 2920640 bytes on heap, 1016672 off heap
}
