package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/reader"
)

// choiceFlag is a flag whose values are a fixed set, declared once with
// the flag: the flag refuses any other value before the command runs, and
// shell completion offers the set (complete.go), so a new flag of this
// kind is oneOf(&cli.StringFlag{...}, values...) and nothing more.
//
// Where the set belongs to a package that parses it (an access mode, a
// scrub mode, a version), the values come from that package and parsedBy
// makes its parser the flag's check, so that the spellings it also takes
// (MMAP, org.apache.cassandra.io.compress.LZ4Compressor) still pass. A
// flag that also takes a file (TakesFile, as --profile: a built-in name
// or a profile file) is checked by the command, which opens it.
type choiceFlag struct {
	valueFlag
	values []string           // offered, in this order
	list   bool               // the value is a comma-separated list of them
	fold   bool               // compared without case (NANOSECONDS or nanoseconds)
	parse  func(string) error // nil: the value must be one of values
}

// valueFlag is what urfave/cli asks of a flag that takes a value
// (*cli.StringFlag, *cli.IntFlag): the help, the checks of required flags
// and the flag's action all go through these interfaces.
type valueFlag interface {
	cli.DocGenerationFlag
	cli.CategorizableFlag
	cli.RequiredFlag
	cli.ActionableFlag
}

// oneOf makes f a flag whose value is one of values.
func oneOf(f valueFlag, values ...string) *choiceFlag {
	return &choiceFlag{valueFlag: f, values: values}
}

// listOf makes f a flag whose value is a comma-separated list of values.
func listOf(f valueFlag, values ...string) *choiceFlag {
	return &choiceFlag{valueFlag: f, values: values, list: true}
}

// parsedBy makes parse, the parser of the package that owns the set, the
// flag's check: the command calls it too, to turn the value into its type.
func (f *choiceFlag) parsedBy(parse func(string) error) *choiceFlag {
	f.parse = parse
	return f
}

// ignoringCase lets the value be given in any case.
func (f *choiceFlag) ignoringCase() *choiceFlag {
	f.fold = true
	return f
}

// RunAction checks the value given, before the command's action runs
// (urfave/cli runs the actions of the flags given, after Before).
func (f *choiceFlag) RunAction(c *cli.Context) error {
	name := f.Names()[0]
	if err := f.check(fmt.Sprint(c.Value(name))); err != nil {
		return usageError("%s: --%s%s (see sstabletool %s --help)", c.Command.Name, name, err, c.Command.Name)
	}
	return f.valueFlag.RunAction(c)
}

// check returns what is wrong with value, as the rest of a message that
// starts with the flag's name: ` "x": expected a, b or c`.
func (f *choiceFlag) check(value string) error {
	if takesFile(f) {
		return nil
	}
	if f.parse != nil {
		if err := f.parse(value); err != nil {
			return fmt.Errorf(": %w", err)
		}
		return nil
	}
	items := []string{value}
	if f.list {
		items = splitList(value)
	}
	for _, it := range items {
		if !slices.ContainsFunc(f.values, func(v string) bool { return v == it || f.fold && strings.EqualFold(v, it) }) {
			return fmt.Errorf(" %q: expected %s", it, orList(f.values))
		}
	}
	return nil
}

// orList is "a", "a or b", "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// names returns the String of each value: the names of a package's
// constants (reader.AccessModes(), scrub.Modes()) as a flag offers them.
func names[T fmt.Stringer](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = v.String()
	}
	return out
}

// takesFile says whether the flag's value may name a file or directory:
// TakesFile is set, or its placeholder (`DIR` in its usage) is PATH or
// ends in FILE or DIR (LISTFILE, DATA_DIR).
func takesFile(f cli.Flag) bool {
	paths, _ := flagPaths(f)
	return paths
}

// flagPaths is takesFile, and whether the value is a directory.
func flagPaths(f cli.Flag) (paths, dirs bool) {
	if c, ok := f.(*choiceFlag); ok {
		f = c.valueFlag
	}
	switch sf := f.(type) {
	case *cli.StringFlag:
		paths = sf.TakesFile
	case *cli.StringSliceFlag:
		paths = sf.TakesFile
	case *cli.PathFlag:
		paths = true
	}
	d, ok := f.(cli.DocGenerationFlag)
	if !ok || !d.TakesValue() {
		return false, false
	}
	switch p := placeholder(d.GetUsage()); {
	case strings.HasSuffix(p, "DIR"): // DIR, DATA_DIR
		return true, true
	case strings.HasSuffix(p, "FILE") || p == "PATH": // FILE, LISTFILE
		return true, false
	}
	return paths, false
}

// placeholder is the `NAME` a flag's usage quotes, as --help shows it
// (urfave/cli's unquoteUsage).
func placeholder(usage string) string {
	_, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return name
}

// versionFlag is a flag naming an sstable version of either format, as
// parseAnyVersion reads it; it offers the versions releases wrote.
func versionFlag(f *cli.StringFlag) *choiceFlag {
	return oneOf(f, versionNames(format.Released())...).parsedBy(func(s string) error {
		_, err := parseAnyVersion(s)
		return err
	})
}

func versionNames(vs []format.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// compressionFlag is a --compression flag: first (keep, where the command
// can keep the source's compression), none, or a compressor.
func compressionFlag(f *cli.StringFlag, first ...string) *choiceFlag {
	values := append(append(first, "none"), reader.Compressors()...)
	return oneOf(f, values...).parsedBy(func(s string) error {
		_, err := compressorClass(s)
		return err
	})
}
