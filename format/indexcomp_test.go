package format

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The component names Cassandra 5.0's SAI (Version.defaultFileNameFormat:
// SAI, +version, +index name for per-index components, +IndexComponent's
// name, .db) and SASI (ColumnIndex.FILE_NAME_FORMAT, SI_%s.db) give their
// files, and names that only look like them.
func TestParseIndexComponent(t *testing.T) {
	for _, tc := range []struct {
		name string
		want IndexComponent
		ok   bool
	}{
		{"SAI+aa+GroupComplete.db", IndexComponent{Component: "SAI+aa+GroupComplete.db", Kind: IndexSAI, Version: "aa", Part: "GroupComplete"}, true},
		{"SAI+aa+ClusteringKeyBlockOffsets.db", IndexComponent{Component: "SAI+aa+ClusteringKeyBlockOffsets.db", Kind: IndexSAI, Version: "aa", Part: "ClusteringKeyBlockOffsets"}, true},
		{"SAI+aa+val_idx+TermsData.db", IndexComponent{Component: "SAI+aa+val_idx+TermsData.db", Kind: IndexSAI, Version: "aa", Index: "val_idx", Part: "TermsData"}, true},
		{"SAI+ab+v+ColumnComplete.db", IndexComponent{Component: "SAI+ab+v+ColumnComplete.db", Kind: IndexSAI, Version: "ab", Index: "v", Part: "ColumnComplete"}, true},
		{"SI_val_idx.db", IndexComponent{Component: "SI_val_idx.db", Kind: IndexSASI, Index: "val_idx"}, true},
		// A per-index name as a per-sstable one, and the reverse: not
		// Cassandra's.
		{"SAI+aa+TermsData.db", IndexComponent{}, false},
		{"SAI+aa+idx+GroupMeta.db", IndexComponent{}, false},
		{"SAI+aa+idx+Other.db", IndexComponent{}, false},
		{"SAI++GroupComplete.db", IndexComponent{}, false},
		{"SAI+aa+GroupComplete.txt", IndexComponent{}, false},
		{"SI_.db", IndexComponent{}, false},
		{"Data.db", IndexComponent{}, false},
		{"Statistics.db", IndexComponent{}, false},
	} {
		got, ok := ParseIndexComponent(tc.name)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDescriptorIndexComponents(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"nc-1-big-Data.db", "nc-1-big-SAI+aa+GroupComplete.db", "nc-1-big-SAI+aa+v+Meta.db",
		"nc-1-big-SI_v.db", "nc-2-big-SI_v.db", "nc-1-big-TOC.txt", "nc-1-big-SAI+aa+v+Nope.db"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, _, err := ParseDescriptor(filepath.Join(dir, "nc-1-big-Data.db"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.IndexComponents()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Component)
	}
	if d := cmp.Diff([]string{"SAI+aa+GroupComplete.db", "SAI+aa+v+Meta.db", "SI_v.db"}, names); d != "" {
		t.Errorf("components (-want +got):\n%s", d)
	}
	if !got[0].PerSSTable() || !got[0].CompletionMarker() || got[1].PerSSTable() || got[2].PerSSTable() {
		t.Errorf("kinds: %+v", got)
	}
}

func TestIndexTableOf(t *testing.T) {
	for _, tc := range []struct {
		dir, index, table string
		ok                bool
	}{
		{"/data/ks/t-5bc52802de2535edaeab188eecebb090/.t_v_idx", "t_v_idx", "/data/ks/t-5bc52802de2535edaeab188eecebb090", true},
		{"/data/ks/t-5bc52802de2535edaeab188eecebb090", "", "", false},
		{"/data/ks/t/" + StagingDirPrefix + "x", "", "", false},
		{".", "", "", false},
		{"..", "", "", false},
	} {
		index, table, ok := IndexTableOf(tc.dir)
		if index != tc.index || table != tc.table || ok != tc.ok {
			t.Errorf("%s: %q %q %v", tc.dir, index, table, ok)
		}
	}
}

// FuzzParseIndexComponent: any name either is no index component or parses
// into parts that name it again, as Version.defaultFileNameFormat and
// ColumnIndex.FILE_NAME_FORMAT build names.
func FuzzParseIndexComponent(f *testing.F) {
	for _, s := range []string{"SAI+aa+GroupComplete.db", "SAI+aa+idx+TermsData.db", "SI_idx.db", "SAI+aa+a+b+Meta.db", "Data.db"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, ok := ParseIndexComponent(name)
		if !ok {
			return
		}
		var again string
		switch {
		case c.Kind == IndexSASI:
			again = "SI_" + c.Index + ".db"
		case c.Index == "":
			again = "SAI+" + c.Version + "+" + c.Part + ".db"
		default:
			again = "SAI+" + c.Version + "+" + c.Index + "+" + c.Part + ".db"
		}
		if again != name || c.Component != name {
			t.Fatalf("%q parses to %+v, which names %q", name, c, again)
		}
	})
}
