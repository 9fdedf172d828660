package export

import (
	"os"
	"strings"
	"testing"
)

// typeName is how docs/export.md names a column's type.
func typeName(s spec) string {
	t := [...]string{tString: "STRING", tBinary: "BINARY", tInt64: "BIGINT", tInt32: "INT", tBool: "BOOLEAN", tDouble: "DOUBLE",
		tTimestamp: "TIMESTAMP", tStringList: "LIST<STRING>", tSizeMap: "MAP<STRING, BIGINT>"}[s.typ]
	if s.optional {
		t += ", nullable"
	}
	return t
}

// TestDocsListEveryColumn holds docs/export.md's three schema tables to
// the columns the export writes: every column, in order, with its type
// and its description.
func TestDocsListEveryColumn(t *testing.T) {
	b, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, d := range []struct {
		name  string
		specs []spec
	}{{"partitions", partitionSpecs}, {"cells", cellSpecs}, {"sstables", sstableSpecs}} {
		_, section, ok := strings.Cut(doc, "\n### `"+d.name+"/`\n")
		if !ok {
			t.Fatalf("docs/export.md has no section ### `%s/`", d.name)
		}
		section, _, _ = strings.Cut(section, "\n#")
		var got []string
		for _, line := range strings.Split(section, "\n") {
			if strings.HasPrefix(line, "| `") {
				got = append(got, line)
			}
		}
		var want []string
		for _, s := range d.specs {
			want = append(want, "| `"+s.name+"` | "+typeName(s)+" | "+s.doc+" |")
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("docs/export.md, %s/: the table should read\n%s", d.name, strings.Join(want, "\n"))
		}
	}
}
