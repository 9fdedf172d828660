package token_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/format/token"
)

// The Murmur3 tokens of three int keys, and the order an sstable stores
// their partitions in (DecoratedKey order: by token, then by key bytes).
func Example() {
	p, err := token.ForName("org.apache.cassandra.dht.Murmur3Partitioner")
	if err != nil {
		log.Fatal(err)
	}
	keys := [][]byte{{0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 2}}
	for _, k := range keys {
		fmt.Printf("%x %s\n", k, p.Token(k))
	}
	fmt.Println(p.CompareKeys(keys[1], keys[0]) < 0) // key 1 sorts before key 0
	// Output:
	// 00000000 -3485513579396041028
	// 00000001 -4069959284402364209
	// 00000002 -3248873570005575792
	// true
}
