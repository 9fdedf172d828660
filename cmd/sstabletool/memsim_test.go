package main

import (
	"os"
	"testing"
)

// Usage errors exit 2, successful runs 0.
func TestMemsimExitCodes(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = devnull, devnull
	defer func() { os.Stdout, os.Stderr = stdout, stderr }()
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"memsim", "--ops", "20", "--progress=false"}, 0},
		{[]string{"memsim", "--memtable", "nope"}, 2},
		{[]string{"memsim", "--cassandra", "3.11"}, 2},
		{[]string{"memsim", "--cleanup-threshold", "2"}, 2},
		{[]string{"memsim", "--shards", "0"}, 2},
		{[]string{"memsim", "extra-arg"}, 2},
	}
	for _, c := range cases {
		if got := run(append([]string{"sstabletool"}, c.args...)); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
