// Command floor is the floor of docs/performance.md as a whole process,
// to time beside a command with /usr/bin/time: it opens LZ4-compressed
// Data.db files as benchbase.Floor does, maps them, checks every stored
// chunk's CRC32 and decompresses it, in one pass; with -rewrite it also
// compresses every chunk again and takes the CRC32 of the result
// (convert's and upgrade's floor). -cores splits the chunks across that
// many cores (0: every core, GOMAXPROCS); the default is one. A directory
// argument stands for every Data.db under it (a table's, or a node's data
// directory: the node floor), snapshots/, backups/ and hidden
// directories left out as upgrade leaves them.
//
//	go build -o /tmp/floor ./internal/benchbase/floor
//	/usr/bin/time -v /tmp/floor /tmp/big/nc-1-big-Data.db
//	/usr/bin/time -v /tmp/floor -rewrite -cores 0 /tmp/big/nc-1-big-Data.db
//	/usr/bin/time -v /tmp/floor -rewrite -cores 0 /tmp/node/data
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/benchbase"
)

func main() {
	rewrite := flag.Bool("rewrite", false, "also recompress every chunk and take its CRC32 (convert's and upgrade's floor)")
	cores := flag.Int("cores", 1, "cores the chunks are split across (0: every core)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: floor [-rewrite] [-cores N] DATA.db|DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *cores < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), *rewrite, *cores); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(args []string, rewrite bool, cores int) error {
	paths, err := dataFiles(args)
	if err != nil {
		return err
	}
	var floors benchbase.Floors
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			return err
		}
		f, err := benchbase.OpenFloor(s.Data())
		s.Close()
		if err != nil {
			return err
		}
		if f == nil {
			return fmt.Errorf("%s is not LZ4-compressed: it has no floor", p)
		}
		floors = append(floors, f)
	}
	if err := floors.Pass(cores, rewrite); err != nil {
		return err
	}
	chunks := 0
	for _, f := range floors {
		chunks += f.Chunks
	}
	fmt.Printf("%d Data.db, %d chunks, %d bytes uncompressed, on %d cores\n", len(floors), chunks, floors.Length(), benchbase.Cores(cores))
	return nil
}

// dataFiles is every Data.db the arguments name: files as given,
// directories walked.
func dataFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != a && (d.Name() == "snapshots" || d.Name() == "backups" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), "-Data.db") {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Data.db under %s", strings.Join(args, " "))
	}
	return out, nil
}
