package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/reader"
)

// Flags shared by the read commands.
var (
	accessFlag = &cli.StringFlag{Name: "access", Value: "mmap",
		Usage: "how to read components: mmap (memory-mapped, default) or buffered (read calls; use when mmap is unavailable or address space is tight)"}
	jsonFlag      = &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}
	recursiveFlag = &cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "descend into subdirectories of directory arguments"}
	schemaFlag    = &cli.StringFlag{Name: "schema", Usage: "a CREATE TABLE statement (`FILE.cql`, e.g. from DESCRIBE TABLE) naming key columns and cross-checking types"}
)

// stdout and stderr are variables so tests can capture them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

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
	a, err := reader.ParseAccess(c.String("access"))
	if err != nil {
		return sstable.Options{}, usageError("--access: %v", err)
	}
	return sstable.Options{Access: a}, nil
}

// sstablePaths expands the arguments (files or directories) into Data.db paths.
func sstablePaths(c *cli.Context) ([]string, error) {
	if c.NArg() == 0 {
		return nil, usageError("%s: give at least one sstable file or data directory (see --help)", c.Command.Name)
	}
	paths, err := format.FindSSTables(c.Args().Slice(), c.Bool("recursive"))
	if err != nil {
		return nil, badData(err)
	}
	if len(paths) == 0 {
		return nil, usageError("no sstables found under %v (use -r to descend into subdirectories)", c.Args().Slice())
	}
	return paths, nil
}

// singleSSTable resolves a path that must name exactly one sstable: a
// component file, or a directory holding one sstable.
func singleSSTable(path string) (string, error) {
	paths, err := format.FindSSTables([]string{path}, false)
	if err != nil {
		return "", badData(err)
	}
	switch len(paths) {
	case 0:
		return "", usageError("%s: no sstable found", path)
	case 1:
		return paths[0], nil
	}
	return "", usageError("%s holds %d sstables; name one of them, e.g. %s", path, len(paths), paths[0])
}

// openSSTableNoSchema opens one sstable without applying --schema.
func openSSTableNoSchema(c *cli.Context, path string) (*sstable.SSTable, error) {
	path, err := singleSSTable(path)
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

// openSSTable opens one sstable and applies --schema if given.
func openSSTable(c *cli.Context, path string) (*sstable.SSTable, error) {
	s, err := openSSTableNoSchema(c, path)
	if err != nil {
		return nil, err
	}
	if f := c.String("schema"); f != "" {
		if err := applySchema(s, f); err != nil {
			s.Close()
			return nil, badData(err)
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

func newProgress(label string, total int64) *progress {
	f, ok := stderr.(*os.File)
	on := ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) && os.Getenv("CI") == ""
	return &progress{on: on, label: label, total: total}
}

func (p *progress) update(done int64) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	pct := 0.0
	if p.total > 0 {
		pct = 100 * float64(done) / float64(p.total)
	}
	if p.unit != "" {
		fmt.Fprintf(stderr, "\r%s %5.1f%% (%d of %d %s)", p.label, pct, done, p.total, p.unit)
		return
	}
	fmt.Fprintf(stderr, "\r%s %5.1f%% (%s of %s)", p.label, pct, humanBytes(done), humanBytes(p.total))
}

func (p *progress) done() {
	if p.on && !p.last.IsZero() {
		fmt.Fprintf(stderr, "\r\033[K")
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
