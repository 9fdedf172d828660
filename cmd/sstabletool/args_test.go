package main

import (
	"strings"
	"testing"
)

// flagsFirst moves each flag of the named command, with its value, ahead
// of the positional arguments, by the command's own flag definitions.
func TestFlagsFirst(t *testing.T) {
	app := newApp()
	for _, c := range []struct{ in, want string }{
		{"partitions a --sort size b -r --json", "partitions --sort=size --recursive --json -- a b"},
		{"dump f -k 1 --key=2 -x -3 -l", "dump --key=1 --key=2 --exclude-key=-3 --jsonl -- f"},
		{"partitions --csv -- a --json", "partitions --csv -- a --json"},
		{"convert s --verify=false --to oa --out d", "convert --verify=false --to=oa --out=d -- s"},
		{"dump f --help", "dump --help"},
		{"dump - --bogus x", "dump --bogus -- - x"},
		{"nosuchcommand a --b", "nosuchcommand a --b"},
		{"--help", "--help"},
	} {
		got, err := flagsFirst(app, append([]string{"sstabletool"}, strings.Fields(c.in)...))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if g := strings.Join(got[1:], " "); g != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, g, c.want)
		}
	}
	for _, in := range []string{"partitions a --sort size --sort rows", "metadata -r a --recursive", "convert --to oa s --to=nc"} {
		if _, err := flagsFirst(app, append([]string{"sstabletool"}, strings.Fields(in)...)); err == nil {
			t.Errorf("%s: a one-value flag twice was accepted", in)
		}
	}
}
