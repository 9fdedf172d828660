package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/words"
)

// A rewrite of Data.db (convert, upgrade, scrub, and what goes through
// them) moves every row: SAI's files map row ids, SASI's positions in
// Index.db, so none of the source's can describe the sstable written, and
// none is carried over. Cassandra builds an index for an sstable that has
// none of its files when it loads it:
//
//   - SAI: at startup StorageAttachedIndex.getInitializationTask runs
//     startInitialBuild, whose findNonIndexedSSTables takes every live
//     sstable without the index's completion markers (GroupComplete and
//     ColumnComplete, V1OnDiskFormat.isPerColumnIndexBuildComplete) and
//     builds them (StorageAttachedIndexBuilder); the index is not
//     queryable until then;
//   - SASI: when the index is opened at startup, SASIIndex's constructor
//     has DataTracker.update look for each sstable's SI_<index>.db and
//     submits a SASIIndexBuilder for those without one;
//   - Cassandra's own secondary indexes are tables (in .<index>
//     directories): they hold the indexed values and the table's primary
//     keys, not positions in its files, so a rewrite of the table leaves
//     them right; they are sstables like any other, which upgrade and
//     convert -r rewrite too.
//
// What Cassandra must never find is an index file beside a Data.db it
// was not built from: SAI checks only the framing and the markers, SASI
// only that the file opens, and both would answer queries from it. The
// writers here never leave one: an output's name is checked free of any
// file first (writer.NewStaging, or a fresh id for upgrade), and a
// replaced sstable's files all go with it.

// IndexNote is what a rewrite does to one index of one table.
type IndexNote struct {
	Dir      string `json:"dir"` // the table's directory
	Keyspace string `json:"keyspace,omitempty"`
	Table    string `json:"table,omitempty"`
	Index    string `json:"index"`
	// Kind is SAI, SASI, or "secondary index table" (Cassandra's own).
	Kind string `json:"kind"`
	// Covers counts the table's sstables with files of the index (for a
	// secondary index table, its sstables).
	Covers int `json:"sstables_covered"`
	// Rewritten counts those the rewrite replaces, and DataBytes their
	// Data.db bytes: what Cassandra reads to build the index for them.
	Rewritten int   `json:"sstables_rewritten"`
	DataBytes int64 `json:"bytes_to_index"`
}

// Name is the index as nodetool names it: "ks.t.idx", or the index in its
// directory when the directory does not say which table.
func (n IndexNote) Name() string {
	if n.Keyspace != "" && n.Table != "" {
		return n.Keyspace + "." + n.Table + "." + n.Index
	}
	return n.Index + " (in " + n.Dir + ")"
}

// Text says what happens to the index; what is the rewrite ("the
// upgrade", "the conversion", "the scrub"), and inPlace whether it
// replaces the sstables where they are (else its outputs are copies
// elsewhere, loaded later).
func (n IndexNote) Text(what string, inPlace bool) string {
	covers := fmt.Sprintf("index %s (%s) covers %s", n.Name(), n.Kind, words.Plural(n.Covers, "sstable"))
	rebuild := "`nodetool rebuild_index " + n.Keyspace + " " + n.Table + " " + n.Index + "`"
	if n.Keyspace == "" || n.Table == "" {
		rebuild = "`nodetool rebuild_index KEYSPACE TABLE " + n.Index + "`"
	}
	them := "the " + words.Plural(n.Rewritten, "sstable") + " it rewrites"
	if !inPlace {
		them = "the " + words.Plural(n.Rewritten, "sstable") + " it writes"
	}
	when := "at startup"
	if !inPlace {
		when = "when it loads them (at startup, or nodetool import or refresh)"
	}
	switch n.Kind {
	case string(format.IndexSAI):
		return fmt.Sprintf("%s; after %s Cassandra rebuilds it %s for %s (%s of Data.db to index; until then the index is not queryable), or run %s",
			covers, what, when, them, words.PluralGrouped(n.DataBytes, "byte"), rebuild)
	case string(format.IndexSASI):
		return fmt.Sprintf("%s; after %s Cassandra builds it %s for %s, which have no SI_%s.db (%s of Data.db to index; queries miss their rows until then), or run %s",
			covers, what, when, them, n.Index, words.PluralGrouped(n.DataBytes, "byte"), rebuild)
	}
	tail := "its sstables are rewritten too"
	switch {
	case n.Rewritten == 0:
		tail = "its sstables are not among those rewritten (Cassandra reads them as they are; name the table's directory, with -r for convert, to rewrite them too)"
	case !inPlace:
		tail = "its sstables are written into .<index>/ under the output directory, where Cassandra looks for them"
	}
	return fmt.Sprintf("secondary index table %s (.%s/, %s): it holds the table's primary keys, not positions in its files, so %s leaves it right; %s",
		n.Name(), n.Index, words.Plural(n.Covers, "sstable"), what, tail)
}

// IndexNotes says, for the sstables a rewrite replaces (Data.db paths),
// which indexes of their tables lose files and how much they cover, and
// which of them are secondary index tables. It reads each of their
// directories once.
func IndexNotes(rewritten []string) ([]IndexNote, error) {
	byDir := map[string]map[string]bool{} // dir -> prefixes rewritten
	var dirs []string
	for _, p := range rewritten {
		d, _, err := format.ParseDescriptor(p)
		if err != nil {
			return nil, err
		}
		if byDir[d.Dir] == nil {
			byDir[d.Dir] = map[string]bool{}
			dirs = append(dirs, d.Dir)
		}
		byDir[d.Dir][d.Prefix()] = true
	}
	var out []IndexNote
	for _, dir := range dirs {
		notes, err := dirIndexNotes(dir, byDir[dir], byDir)
		if err != nil {
			return nil, err
		}
		out = append(out, notes...)
	}
	return out, nil
}

// dirIndexNotes is IndexNotes for one directory.
func dirIndexNotes(dir string, rewritten map[string]bool, all map[string]map[string]bool) ([]IndexNote, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	td := format.TableOf(dir)
	ks, table := td.Keyspace, td.Table
	if !td.HasID() {
		ks, table = "", ""
	}
	if ix, base, ok := format.IndexTableOf(dir); ok {
		// A secondary index's own table: its sstables are the index.
		n := IndexNote{Dir: base, Index: ix, Kind: "secondary index table"}
		if btd := format.TableOf(base); btd.HasID() {
			n.Keyspace, n.Table = btd.Keyspace, btd.Table
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-"+format.ComponentData) {
				n.Covers++
				if d, _, err := format.ParseDescriptor(filepath.Join(dir, e.Name())); err == nil && rewritten[d.Prefix()] {
					n.Rewritten++
				}
			}
		}
		return []IndexNote{n}, nil
	}
	var out []IndexNote
	for _, e := range ents {
		// A secondary index table the rewrite leaves out.
		sub := filepath.Join(dir, e.Name())
		if ix, _, ok := format.IndexTableOf(sub); ok && e.IsDir() && all[sub] == nil {
			subEnts, err := os.ReadDir(sub)
			if err != nil {
				return nil, err
			}
			n := IndexNote{Dir: dir, Keyspace: ks, Table: table, Index: ix, Kind: "secondary index table"}
			for _, se := range subEnts {
				if strings.HasSuffix(se.Name(), "-"+format.ComponentData) {
					n.Covers++
				}
			}
			if n.Covers > 0 {
				out = append(out, n)
			}
		}
	}
	type key struct{ kind, name string }
	covers := map[key]map[string]bool{}
	var keys []key
	dataSize := map[string]int64{}
	for _, e := range ents {
		d, comp, err := format.ParseDescriptor(filepath.Join(dir, e.Name()))
		if err != nil || e.IsDir() {
			continue
		}
		if comp == format.ComponentData {
			if fi, err := e.Info(); err == nil {
				dataSize[d.Prefix()] = fi.Size()
			}
			continue
		}
		c, ok := format.ParseIndexComponent(comp)
		if !ok || c.PerSSTable() {
			continue
		}
		k := key{string(c.Kind), c.Index}
		if covers[k] == nil {
			covers[k] = map[string]bool{}
			keys = append(keys, k)
		}
		covers[k][d.Prefix()] = true
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.kind+a.name, b.kind+b.name) })
	for _, k := range keys {
		n := IndexNote{Dir: dir, Keyspace: ks, Table: table, Index: k.name, Kind: k.kind}
		for prefix := range covers[k] {
			if _, live := dataSize[prefix]; !live {
				continue // files of no sstable: not the rewrite's business
			}
			n.Covers++
			if rewritten[prefix] {
				n.Rewritten++
				n.DataBytes += dataSize[prefix]
			}
		}
		if n.Rewritten > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}
