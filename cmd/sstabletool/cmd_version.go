package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
)

// buildInfo is what a build says about itself (debug.ReadBuildInfo), for
// a bug report: --version and "version" print it, "version --json" as
// JSON, and memsim's settings name the build with it.
type buildInfo struct {
	// Version is the module's: v1.2.3 from "go install ...@v1.2.3", a
	// pseudo-version (v0.0.0-20240501120000-0123456789ab, +dirty with
	// uncommitted changes) from "go build" in a git checkout, (devel)
	// where the go command knew none.
	Version string `json:"version"`
	// Revision, Time and Modified are the commit the build was made from,
	// its date and whether the tree had uncommitted changes; the go
	// command records them when it builds in a git checkout (unless
	// -buildvcs=false), never for "go install ...@version".
	Revision string          `json:"revision,omitempty"`
	Time     string          `json:"time,omitempty"`
	Modified *bool           `json:"modified,omitempty"`
	Go       string          `json:"go"`       // the toolchain: go1.26.8
	Platform string          `json:"platform"` // GOOS/GOARCH
	Reads    []formatSupport `json:"reads"`    // the sstable formats and versions the build reads
}

// formatSupport is one sstable format and the versions of it the build
// reads (format.Released).
type formatSupport struct {
	Format   string   `json:"format"`
	Versions []string `json:"versions"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				m := s.Value == "true"
				b.Modified = &m
			}
		}
	}
	for _, v := range format.Released() {
		if n := len(b.Reads); n == 0 || b.Reads[n-1].Format != string(v.Format) {
			b.Reads = append(b.Reads, formatSupport{Format: string(v.Format)})
		}
		b.Reads[len(b.Reads)-1].Versions = append(b.Reads[len(b.Reads)-1].Versions, v.Name)
	}
	return b
}

// short names the build in one word or two: the module version, then the
// revision's first 12 digits (+modified) when known. memsim's results
// keep it.
func (b buildInfo) short() string {
	if b.Revision == "" {
		return b.Version
	}
	s := b.Version + " " + b.Revision[:min(12, len(b.Revision))]
	if b.Modified != nil && *b.Modified {
		s += "+modified"
	}
	return s
}

// writeText prints the build as --version does: the first line as before
// ("sstabletool version ..."), so that scripts reading it still work.
func (b buildInfo) writeText(w io.Writer) {
	fmt.Fprintf(w, "sstabletool version %s\n", b.Version)
	switch {
	case b.Revision == "":
		fmt.Fprintln(w, "revision: unknown (built outside a git checkout, with -buildvcs=false, or by go install)")
	default:
		fmt.Fprintf(w, "revision: %s", b.Revision)
		if b.Time != "" {
			fmt.Fprintf(w, " (%s)", b.Time)
		}
		if b.Modified != nil && *b.Modified {
			fmt.Fprint(w, ", modified: the tree had uncommitted changes")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "go: %s %s\n", b.Go, b.Platform)
	var reads []string
	for _, f := range b.Reads {
		reads = append(reads, f.Format+" "+strings.Join(f.Versions, " "))
	}
	fmt.Fprintf(w, "reads: %s\n", strings.Join(reads, "; "))
}

// version is the app's Version: urfave/cli shows --version (and -v) only
// when it is set, and prints it through printVersion.
func version() string { return readBuildInfo().Version }

// printVersion is what --version prints: the version command's text.
func printVersion(c *cli.Context) { readBuildInfo().writeText(c.App.Writer) }

// versionCommand is the version command.
func versionCommand() *cli.Command {
	return command(&cli.Command{
		Name:  "version",
		Usage: "print the version, the commit it was built from, the Go toolchain and the sstable versions it reads",
		Description: "sstabletool --version (or -v) prints the same. --json prints it as JSON, for a bug report:\n" +
			"the module version, the revision and its date, whether the tree had uncommitted changes\n" +
			"(\"modified\"), the Go toolchain and platform, and the versions of each sstable format it reads.\n" +
			"A build made by go build in a git checkout knows its revision; go install ...@version knows its\n" +
			"version only.\n\n" +
			"Examples:\n" +
			"  sstabletool version\n" +
			"  sstabletool version --json",
		Flags:  []cli.Flag{jsonFlag},
		Action: versionAction,
	}, noArgs)
}

func versionAction(c *cli.Context) error {
	b := readBuildInfo()
	if c.Bool("json") {
		return writeJSON(b)
	}
	b.writeText(c.App.Writer)
	return nil
}
