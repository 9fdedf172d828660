package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// TestParallelCommandsMatchOneCore: on a table of several segments, the
// commands that walk Data.db on every core (partitions, verify) print
// what they print on one, byte for byte.
func TestParallelCommandsMatchOneCore(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 900 // about 4 MB of Data.db: four segments
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Data().Length()
	s.Close()
	if n < 3*sstable.DefaultSegmentSize {
		t.Fatalf("%d bytes of Data.db: too few for several segments", n)
	}
	runWith := func(procs int, args ...string) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var out, errOut bytes.Buffer
		savedOut, savedErr := stdout, stderr
		stdout, stderr = &out, &errOut
		code := run(append([]string{"sstabletool"}, args...))
		stdout, stderr = savedOut, savedErr
		if code != exitOK {
			t.Fatalf("sstabletool %v: exit %d: %s", args, code, errOut.String())
		}
		return out.String() + errOut.String()
	}
	for _, args := range [][]string{
		{"partitions", res.DataPath},
		{"partitions", "-y", res.DataPath},
		{"partitions", "--csv", "-x", "72fc1a5e8cca6928lxj9", "-t", "1000", res.DataPath},
		{"verify", res.DataPath},
		{"verify", "--json", res.DataPath},
	} {
		if one, two := runWith(1, args...), runWith(2, args...); one != two {
			t.Errorf("sstabletool %v: on two cores\n%s\non one\n%s", args, two, one)
		}
	}
}
