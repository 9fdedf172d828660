package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// argSpec is what a command takes besides its flags: how many positional
// arguments and which flags must be given. It is checked before the
// command's action runs, so no command ignores an argument silently.
type argSpec struct {
	min, max int    // positional arguments; max < 0: any number
	what     string // what a positional argument is, for messages ("sstable")
	required []string
}

// Common shapes.
var (
	noArgs      = argSpec{min: 0, max: 0}
	oneSSTable  = argSpec{min: 1, max: 1, what: "sstable (a component file, or a directory holding one sstable)"}
	sstableArgs = argSpec{min: 1, max: -1, what: "sstable file or data directory"}
)

func (a argSpec) withRequired(flags ...string) argSpec { a.required = flags; return a }

// check is the command's Before hook.
func (a argSpec) check(c *cli.Context) error {
	name := c.Command.Name
	see := fmt.Sprintf("(see sstabletool %s --help)", name)
	n := c.NArg()
	switch {
	case a.max == 0 && n > 0:
		return usageError("%s: unexpected argument %q: %s takes no positional arguments; flags come as --name value %s",
			name, c.Args().First(), name, see)
	case a.min == 1 && a.max == 1 && n != 1:
		if n == 0 {
			return usageError("%s: give exactly one %s %s", name, a.what, see)
		}
		return usageError("%s: give exactly one %s; got %d arguments: %s %s", name, a.what, n, strings.Join(c.Args().Slice(), " "), see)
	case n < a.min:
		return usageError("%s: give at least one %s %s", name, a.what, see)
	case a.max > 0 && n > a.max:
		return usageError("%s: at most %d arguments, got %d: %s %s", name, a.max, n, strings.Join(c.Args().Slice(), " "), see)
	}
	for _, f := range a.required {
		if !c.IsSet(f) {
			return usageError("%s: --%s is required %s", name, f, see)
		}
	}
	return nil
}

// usageFailure turns a flag parsing error ("flag provided but not
// defined") into exit code 2 with the message on stderr, instead of
// urfave/cli's habit of printing the whole help to stdout.
func usageFailure(c *cli.Context, err error, _ bool) error {
	if c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name {
		return usageError("%v (see sstabletool --help)", err)
	}
	name := c.Command.Name
	return usageError("%s: %v (see sstabletool %s --help)", name, err, name)
}

// flagsFirst rewrites a command line so that urfave/cli, which stops
// parsing flags at the first positional argument, sees every flag: the
// flags of the command (with their values) move ahead of its positional
// arguments, which follow a "--". A "--" on the command line ends the
// flags: everything after it is positional, whatever it looks like.
// Only a flag's definition says whether it takes a value ("-k 42") or not
// ("-r"), so the command is looked up in app; an unknown flag is kept as a
// flag for the parser to refuse.
//
// A flag that takes one value given twice (--sort size --sort rows) is an
// error: the parser would keep the last and drop the first silently.
func flagsFirst(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return args, nil
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil || cmd.SkipFlagParsing { // __complete: its arguments are a command line
		return args, nil
	}
	takesValue := map[string]bool{}
	canonical := map[string]string{}
	repeatable := map[string]bool{}
	seen := map[string]string{}
	for _, f := range append(append([]cli.Flag{}, cmd.Flags...), cli.HelpFlag) {
		tv := true
		if d, ok := f.(cli.DocGenerationFlag); ok {
			tv = d.TakesValue()
		}
		if sf, ok := f.(cli.DocGenerationSliceFlag); ok && sf.IsSliceFlag() {
			repeatable[f.Names()[0]] = true
		}
		for _, n := range f.Names() {
			takesValue[n] = tv
			canonical[n] = f.Names()[0]
		}
	}
	var flags, pos []string
	help := false
	tail := args[2:]
	for i := 0; i < len(tail); i++ {
		a := tail[i]
		if a == "--" {
			pos = append(pos, tail[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		given := a // as written, with its value, for messages
		if !hasValue && takesValue[name] && i+1 == len(tail) {
			return nil, usageError("%s: %s needs a value (see sstabletool %s --help)", cmd.Name, a, cmd.Name)
		}
		if !hasValue && takesValue[name] && i+1 < len(tail) {
			value, hasValue = tail[i+1], true
			given += " " + value
			i++
		}
		// One spelling per flag: urfave/cli refuses "-k 1 --key 2".
		if c, ok := canonical[name]; ok {
			if prev, dup := seen[c]; dup && !repeatable[c] {
				return nil, usageError("%s: --%s given twice (%s, then %s); give it once (see sstabletool %s --help)", cmd.Name, c, prev, given, cmd.Name)
			}
			seen[c] = given
			a = "--" + c
		}
		if hasValue {
			a += "=" + value
		}
		flags = append(flags, a)
		help = help || slices.Contains(cli.HelpFlag.Names(), name)
	}
	out := append(append([]string{}, args[:2]...), flags...)
	// With --help the positional arguments would be read as a help topic.
	if len(pos) > 0 && !help {
		out = append(append(out, "--"), pos...)
	}
	return out, nil
}
