package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/reader"
)

// Flags shared by the read commands.
var (
	accessFlag = oneOf(&cli.StringFlag{Name: "access", Value: "mmap",
		Usage: "how to read components: mmap (memory-mapped, default) or buffered (read calls; use when mmap is unavailable or address space is tight)"},
		names(reader.AccessModes())...).parsedBy(parseAccess)
	jsonFlag      = &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}
	recursiveFlag = &cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "descend into subdirectories of directory arguments (skipping snapshots/, backups/ and sstabletool's staging directories)"}
	snapshotsFlag = &cli.BoolFlag{Name: "snapshots", Usage: "with -r, also read the sstables in snapshots/ directories (copies, skipped by default)"}
	backupsFlag   = &cli.BoolFlag{Name: "backups", Usage: "with -r, also read the sstables in backups/ directories (incremental backups, skipped by default)"}
)

// stdout and stderr are variables so tests can capture them.
var (
	stdout io.Writer = newScreen(os.Stdout)
	stderr io.Writer = newScreen(os.Stderr)
)

// screen is os.Stdout or os.Stderr as the commands write to them. On a
// terminal a write first erases a progress bar showing there (its next
// update draws it again), so that no line of output lands on top of the
// bar; output piped elsewhere leaves the bar alone.
type screen struct {
	*os.File
	tty bool
}

func newScreen(f *os.File) screen {
	return screen{f, isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())}
}

func (s screen) Write(b []byte) (int, error) {
	if s.tty {
		hideBar()
	}
	return s.File.Write(b)
}

// isTerminal says whether w is a terminal (a screen or an *os.File on
// one); captured output in tests is not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// badData wraps an error as exit code 2 (input unreadable, or bad usage).
func badData(err error) error {
	if err == nil {
		return nil
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return err
	}
	return cli.Exit(err.Error(), exitBadData)
}

func usageError(format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), exitBadData)
}

func openOptions(c *cli.Context) (sstable.Options, error) {
	mode := c.String("access")
	if mode == "" && !c.IsSet("access") {
		// A command line without the flag at all: sstabletool alone on a
		// terminal browses the demo from the root, which has no --access.
		mode = accessFlag.GetValue()
	}
	a, err := reader.ParseAccess(mode)
	if err != nil {
		return sstable.Options{}, usageError("--access: %v", err)
	}
	return sstable.Options{Access: a, OnIndexDamage: warnIndexDamage}, nil
}

// parseAccess is --access's check.
func parseAccess(s string) error {
	_, err := reader.ParseAccess(s)
	return err
}

// warnIndexDamage says on stderr that a key lookup found the partition
// index damaged and scans Data.db instead: the answer is Data.db's, as
// sstabledump -e would give it.
func warnIndexDamage(err error) {
	fmt.Fprintf(stderr, "sstabletool: %v\n", err)
}

// sstableError is an sstable a command could not read, as --json lists it
// beside the results of the others.
type sstableError struct {
	SSTable string `json:"sstable"`
	Error   string `json:"error"`
}

// scan is the sstables a command's path arguments name: the ones to read,
// in order, and those that failed along the way. Every multi-sstable
// command goes through it, so that one bad sstable never stops a run: each
// failure is reported on stderr (and by the command in its --json), the
// others are read, and the command exits 2 at the end.
type scan struct {
	found  []format.Found
	failed []sstableError
	verb   string // what failed to happen, for the summary: "read" unless set
}

// findSSTables resolves the arguments (files or directories) into sstables
// and reports on stderr what the scan skipped.
func findSSTables(c *cli.Context) (*scan, error) { return findSSTablesIn(c, c.Args().Slice()) }

// findSSTablesIn is findSSTables for the paths a command's arguments hold
// (query's come after its statement).
func findSSTablesIn(c *cli.Context, paths []string) (*scan, error) {
	for _, f := range []string{"snapshots", "backups"} {
		if c.Bool(f) && !c.Bool("recursive") {
			return nil, usageError("--%s works with -r: only a recursive scan reaches %s/ directories (name one directly to read it)", f, f)
		}
	}
	res := format.Find(paths, format.FindOptions{
		Recursive: c.Bool("recursive"), Snapshots: c.Bool("snapshots"), Backups: c.Bool("backups")})
	reportSkipped(res.Skipped)
	if len(res.SSTables) == 0 {
		hint := ""
		if !c.Bool("recursive") {
			hint = " (use -r to descend into subdirectories)"
			if c.Command != nil && c.Command.Name == "scrub" {
				hint = " (use --recursive to descend into subdirectories; scrub's -r is --reinsert-overflowed-ttl, as sstablescrub's)"
			}
		}
		return nil, usageError("no sstables found under %s%s", strings.Join(paths, " "), hint)
	}
	return &scan{found: res.SSTables}, nil
}

// reportSkipped names each staging directory and transaction leftover, and
// counts snapshots/ and backups/ directories (a node has one per table).
func reportSkipped(skipped []format.Skipped) {
	dirs := map[format.SkipReason][]string{}
	for _, sk := range skipped {
		switch sk.Reason {
		case format.SkipSnapshots, format.SkipBackups:
			dirs[sk.Reason] = append(dirs[sk.Reason], sk.Path)
		case format.SkipUnfinished:
			fmt.Fprintf(stderr, "sstabletool: skipped %s: not live data: %s\n", sk.Path, sk.Detail)
		default:
			fmt.Fprintf(stderr, "sstabletool: skipped %s: %s\n", sk.Path, sk.Reason)
		}
	}
	for _, r := range []format.SkipReason{format.SkipSnapshots, format.SkipBackups} {
		switch d := dirs[r]; len(d) {
		case 0:
		case 1:
			fmt.Fprintf(stderr, "sstabletool: skipped %s: %s\n", d[0], r)
		default:
			fmt.Fprintf(stderr, "sstabletool: skipped %d %s/ directories, e.g. %s: %s\n", len(d), filepath.Base(d[0]), d[0], r)
		}
	}
}

// total is the number of sstables (and unusable arguments) the scan holds.
func (s *scan) total() int { return len(s.found) }

// each runs fn on every sstable in order. One that cannot be found, opened
// or read is reported on stderr and passed to onFail (nil: nothing more to
// do, e.g. for text output), and the scan goes on; an error wrapped by
// stop ends it (bad usage that no other sstable would survive either).
func (s *scan) each(fn func(path string) error, onFail func(sstableError)) error {
	for _, f := range s.found {
		err := f.Err
		if err == nil {
			err = fn(f.Path)
		}
		if err == nil {
			continue
		}
		var st stopError
		if errors.As(err, &st) {
			return st.error
		}
		e := sstableError{SSTable: f.Path, Error: failureText(f.Path, err)}
		s.failed = append(s.failed, e)
		fmt.Fprintln(stderr, "sstabletool:", e.Error)
		if onFail != nil {
			onFail(e)
		}
	}
	return nil
}

// err is the command's exit for the failures: nil when there were none.
func (s *scan) err() error {
	if len(s.failed) == 0 {
		return nil
	}
	if s.total() == 1 {
		return cli.Exit("", exitBadData) // the one error is said already
	}
	verb := s.verb
	if verb == "" {
		verb = "read"
	}
	return cli.Exit(fmt.Sprintf("%d of %d sstables could not be %s", len(s.failed), s.total(), verb), exitBadData)
}

// stopError ends a scan: the error is not about one sstable.
type stopError struct{ error }

func (e stopError) Unwrap() error { return e.error }

func stop(err error) error {
	if err == nil {
		return nil
	}
	return stopError{err}
}

// failureText names the sstable unless the error already does.
func failureText(path string, err error) string {
	msg := err.Error()
	name := path
	if d, _, perr := format.ParseDescriptor(path); perr == nil {
		name = filepath.Join(d.Dir, d.Prefix())
	}
	if strings.Contains(msg, name) {
		return msg
	}
	return path + ": " + msg
}

// singleSSTable resolves a path that must name exactly one sstable: a
// component file, or a directory holding one sstable.
func singleSSTable(path string) (string, error) {
	res := format.Find([]string{path}, format.FindOptions{})
	reportSkipped(res.Skipped)
	switch len(res.SSTables) {
	case 0:
		return "", usageError("%s: no sstable found", path)
	case 1:
		f := res.SSTables[0]
		return f.Path, badData(f.Err)
	}
	return "", usageError("%s holds %d sstables; name one of them, e.g. %s", path, len(res.SSTables), res.SSTables[0].Path)
}

// openSSTableNoSchema opens the one sstable an argument names, without
// applying --schema.
func openSSTableNoSchema(c *cli.Context, arg string) (*sstable.SSTable, error) {
	path, err := singleSSTable(arg)
	if err != nil {
		return nil, err
	}
	o, err := openOptions(c)
	if err != nil {
		return nil, err
	}
	s, err := sstable.Open(path, o)
	return s, badData(err)
}

// openSSTable opens the one sstable an argument names and checks it
// against --schema (sf, nil without).
func openSSTable(c *cli.Context, arg string, sf *inspect.SchemaSource) (*sstable.SSTable, error) {
	path, err := singleSSTable(arg)
	if err != nil {
		return nil, err
	}
	s, err := openFound(c, path, sf)
	return s, badData(err)
}

// openFound opens an sstable a scan found (its Data.db path) and checks it
// against --schema (sf, nil without). A bad --access stops the scan;
// anything else is this sstable's failure.
func openFound(c *cli.Context, path string, sf *inspect.SchemaSource) (*sstable.SSTable, error) {
	o, err := openOptions(c)
	if err != nil {
		return nil, stop(err)
	}
	s, err := sstable.Open(path, o)
	if err != nil {
		return nil, err
	}
	if c.Command.Name != "verify" { // verify reports them as problems
		for _, f := range s.ForeignTypes() {
			fmt.Fprintf(stderr, "sstabletool: %s: Statistics.db: %s has type class %q, which is not one of Cassandra's; its values are shown as bytes\n", path, f.Column, f.Class)
		}
	}
	if sf != nil {
		if _, err := sf.Apply(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func writeJSON(v any) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// progress reports long work on stderr when it is a terminal and says
// nothing when output is piped or redirected.
type progress struct {
	on    bool
	label string
	total int64
	unit  string // "" for bytes, else a count's noun ("partitions")
	last  time.Time
}

// bar is the progress line now drawn on the terminal, if any. Workers of
// one command (upgrade's jobs) update it and print lines concurrently.
var bar struct {
	sync.Mutex
	showing *progress
}

// hideBar erases the progress line before other output is written.
func hideBar() {
	bar.Lock()
	defer bar.Unlock()
	if bar.showing != nil {
		os.Stderr.WriteString("\r\033[K")
		bar.showing = nil
	}
}

func newProgress(label string, total int64) *progress {
	on := isTerminal(stderr) && os.Getenv("CI") == ""
	return &progress{on: on, label: label, total: total}
}

// progressFlag lets a command's --progress flag, when given, override
// newProgress's terminal detection.
func progressFlag(c *cli.Context, p *progress) *progress {
	if c.IsSet("progress") {
		p.on = c.Bool("progress")
	}
	return p
}

func (p *progress) update(done int64) {
	if !p.on {
		return
	}
	bar.Lock()
	defer bar.Unlock()
	if time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	pct := 0.0
	if p.total > 0 {
		pct = 100 * float64(done) / float64(p.total)
	}
	// Written to the terminal itself: a write through stderr would erase
	// the bar it draws.
	if p.unit != "" {
		fmt.Fprintf(os.Stderr, "\r%s %5.1f%% (%d of %d %s)", p.label, pct, done, p.total, p.unit)
	} else {
		fmt.Fprintf(os.Stderr, "\r%s %5.1f%% (%s of %s)", p.label, pct, cellfmt.Human(done), cellfmt.Human(p.total))
	}
	bar.showing = p
}

func (p *progress) done() {
	bar.Lock()
	defer bar.Unlock()
	if p.on && bar.showing == p {
		os.Stderr.WriteString("\r\033[K")
		bar.showing = nil
	}
}
