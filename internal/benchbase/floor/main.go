// Command floor is the floor of docs/performance.md as a whole
// process, to time beside a command with /usr/bin/time: it opens an
// LZ4-compressed Data.db as benchbase.Floor does, maps it, checks every
// stored chunk's CRC32 and decompresses it, in one pass; with -rewrite it
// also compresses every chunk again and takes the CRC32 of the result
// (convert's floor).
//
//	go build -o /tmp/floor ./internal/benchbase/floor
//	/usr/bin/time -v /tmp/floor /tmp/big/nc-1-big-Data.db
//	/usr/bin/time -v /tmp/floor -rewrite /tmp/big/nc-1-big-Data.db
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
)

func main() {
	rewrite := flag.Bool("rewrite", false, "also recompress every chunk and take its CRC32 (convert's floor)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: floor [-rewrite] DATA.db")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *rewrite); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(path string, rewrite bool) error {
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	f, err := benchbase.OpenFloor(s.Data())
	if err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("%s is not LZ4-compressed: it has no floor", path)
	}
	return f.Pass(f.NewBuffers(), rewrite)
}
