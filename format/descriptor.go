package format

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/reader"
)

// Component names as they appear in file names and TOC.txt.
const (
	ComponentData            = "Data.db"
	ComponentIndex           = "Index.db"
	ComponentSummary         = "Summary.db"
	ComponentFilter          = "Filter.db"
	ComponentStatistics      = "Statistics.db"
	ComponentCompressionInfo = "CompressionInfo.db"
	ComponentDigest          = "Digest.crc32"
	ComponentCRC             = "CRC.db"
	ComponentTOC             = "TOC.txt"
	ComponentPartitions      = "Partitions.db" // BTI
	ComponentRows            = "Rows.db"       // BTI
)

// Descriptor names one sstable: its directory, version, generation and
// format, as encoded in every component's file name
// ("<version>-<generation>-<format>-<component>", io/sstable/Descriptor.java).
// The format is part of Version.
type Descriptor struct {
	Dir        string
	Version    Version
	Generation string // an integer, or the base-36 time-UUID id of 4.1+
}

// UnsupportedFormatError is a sstable of a format other than big.
type UnsupportedFormatError struct {
	Path, Format, Version string
}

func (e *UnsupportedFormatError) Error() string {
	name := e.Format
	if e.Format == "bti" {
		name = "bti (trie-indexed, Cassandra 5.0)"
	}
	return fmt.Sprintf("%s: sstable format %s version %s is not supported yet; this tool reads big-format sstables (ma..oa)", e.Path, name, e.Version)
}

// ParseDescriptor parses the file name of any component of an sstable.
// It returns the descriptor and the component name.
func ParseDescriptor(path string) (Descriptor, string, error) {
	base := filepath.Base(path)
	parts := strings.SplitN(base, "-", 4)
	if len(parts) != 4 {
		return Descriptor{}, "", fmt.Errorf("%s: not an sstable component name (expected <version>-<generation>-<format>-<Component>, e.g. nc-1-big-Data.db)", path)
	}
	verName, gen, formatName, component := parts[0], parts[1], parts[2], parts[3]
	if formatName != string(Big) && formatName != string(BTI) {
		return Descriptor{}, "", fmt.Errorf("%s: unknown sstable format %q (expected big or bti)", path, formatName)
	}
	v, err := ParseFormatVersion(Format(formatName), verName)
	if err != nil {
		return Descriptor{}, "", fmt.Errorf("%s: %w", path, err)
	}
	if gen == "" {
		return Descriptor{}, "", fmt.Errorf("%s: empty generation in file name", path)
	}
	return Descriptor{Dir: filepath.Dir(path), Version: v, Generation: gen}, component, nil
}

// Path returns the file path of one component.
func (d Descriptor) Path(component string) string {
	return filepath.Join(d.Dir, d.Prefix()+component)
}

// Prefix is the file name up to the component: "nc-1-big-".
func (d Descriptor) Prefix() string {
	return d.Version.Name + "-" + d.Generation + "-" + string(d.Version.Format) + "-"
}

// WithDir returns the same sstable name in another directory (for writers).
func (d Descriptor) WithDir(dir string) Descriptor { d.Dir = dir; return d }

// WithVersion returns the same sstable name with another version (for convert).
func (d Descriptor) WithVersion(v Version) Descriptor { d.Version = v; return d }

func (d Descriptor) String() string { return d.Path(ComponentData) }

// ReadTOC reads TOC.txt, the list of components Cassandra wrote. A missing
// TOC is not an error (old or hand-copied sstables); it returns nil. Lines
// that are no plausible component file name are left out (ReadTOCEntries
// returns them).
func (d Descriptor) ReadTOC() ([]string, error) {
	names, _, err := d.ReadTOCEntries()
	return names, err
}

// ReadTOCEntries is ReadTOC that also returns the lines it left out.
func (d Descriptor) ReadTOCEntries() ([]string, []BadTOCEntry, error) {
	b, err := reader.ReadFile(d.Path(ComponentTOC))
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return parseTOC(d.Path(ComponentTOC), b)
}

// BadTOCEntry is a line of TOC.txt that is no plausible component file
// name: joined to the sstable's prefix it would leave the directory or
// put terminal control bytes in a path. Cassandra would take it for a
// custom component, find no such file and go on, so readers ignore it;
// verify reports it.
type BadTOCEntry struct {
	Line   int    // 1-based, counting every line end as Java does
	Offset int64  // of the line in TOC.txt
	Text   string // the line as stored; print it with Quoted
	Why    string // what makes it implausible
}

// Quoted is the line as a Go string literal (cut when long), safe to print.
func (e BadTOCEntry) Quoted() string { return quoteLine(e.Text) }

// implausibleComponent says why name cannot be a component's file name,
// or "" when it can. Component names are file-name suffixes; anything that
// is a path or carries control or format characters (which would rewrite
// a terminal or hide text when printed) is not one.
func implausibleComponent(name string) string {
	switch {
	case name == "." || name == "..":
		return "it names a directory"
	case strings.ContainsAny(name, `/\`):
		return "it contains a path separator"
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return "it contains control characters"
		}
	}
	return ""
}

// parseTOC parses TOC.txt's bytes; path names the file in errors.
func parseTOC(path string, b []byte) ([]string, []BadTOCEntry, error) {
	// Cassandra reads it with Files.readAllLines: UTF-8, lines ended by
	// \n, \r or \r\n; bytes that are not UTF-8 make it fail to load.
	var out []string
	var bad []BadTOCEntry
	lines := strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == '\r' })
	for i, line := range lines {
		if !utf8.ValidString(line) {
			n, off := tocLine(b, i)
			return nil, nil, corrupt.New(path, ComponentTOC, off,
				fmt.Sprintf("line %d to be a component name in UTF-8 (Cassandra reads TOC.txt as UTF-8)", n),
				fmt.Errorf("found %s", quoteLine(line)))
		}
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if why := implausibleComponent(line); why != "" {
			n, off := tocLine(b, i)
			bad = append(bad, BadTOCEntry{Line: n, Offset: off, Text: line, Why: why})
			continue
		}
		out = append(out, line)
	}
	return out, bad, nil
}

// quoteLine is strconv.Quote for messages: a long line is cut.
func quoteLine(s string) string {
	const max = 64
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// tocLine returns the 1-based line number and byte offset of the i-th
// non-empty line in b, counting \r\n, \r and \n as line ends as Java does.
func tocLine(b []byte, i int) (line int, off int64) {
	n, seen := 1, 0
	for p := 0; p < len(b); {
		end := p
		for end < len(b) && b[end] != '\n' && b[end] != '\r' {
			end++
		}
		if end > p {
			if seen == i {
				return n, int64(p)
			}
			seen++
		}
		if end+1 < len(b) && b[end] == '\r' && b[end+1] == '\n' {
			end++
		}
		p = end + 1
		n++
	}
	return n, int64(len(b))
}

// FindSSTables returns one Data.db path per sstable under the given paths
// (see Find), or the first error Find reported.
func FindSSTables(paths []string, recursive bool) ([]string, error) {
	var out []string
	for _, f := range Find(paths, FindOptions{Recursive: recursive}).SSTables {
		if f.Err != nil {
			return nil, f.Err
		}
		out = append(out, f.Path)
	}
	return out, nil
}
